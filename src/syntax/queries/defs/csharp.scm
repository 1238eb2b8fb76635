; C# definitions the crate's tags query (after these) leaves out.
(struct_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.type
(constructor_declaration name: (identifier) @name) @definition.method
(file_scoped_namespace_declaration name: (_) @name) @definition.module
