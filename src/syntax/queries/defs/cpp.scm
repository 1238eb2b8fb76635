; C++ namespaces, which the crate's tags query (after this) leaves out.
(namespace_definition name: (namespace_identifier) @name) @definition.module
