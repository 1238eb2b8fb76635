; Swift definitions. The crate's own tags query captures the whole type as the definition of
; each of its methods and properties, so this one replaces it. On a node two patterns
; capture, the first one's kind is taken: a method before a function.
(class_declaration name: (type_identifier) @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.interface
(class_body (function_declaration name: (simple_identifier) @name) @definition.method)
(enum_class_body (function_declaration name: (simple_identifier) @name) @definition.method)
(class_body (init_declaration "init" @name) @definition.method)
(enum_class_body (init_declaration "init" @name) @definition.method)
(class_body (deinit_declaration "deinit" @name) @definition.method)
(protocol_body
  (protocol_function_declaration name: (simple_identifier) @name) @definition.method)
(function_declaration name: (simple_identifier) @name) @definition.function
; Properties of a type, and top-level ones; not a function's locals.
(class_body
  (property_declaration name: (pattern (simple_identifier) @name)) @definition.property)
(enum_class_body
  (property_declaration name: (pattern (simple_identifier) @name)) @definition.property)
(source_file
  (property_declaration name: (pattern (simple_identifier) @name)) @definition.property)
(typealias_declaration name: (type_identifier) @name) @definition.type
