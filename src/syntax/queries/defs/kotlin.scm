; Kotlin definitions (tree-sitter-kotlin-ng ships no tags query). On a node two patterns
; capture, the first one's kind is taken: an interface before a class, a method before a
; function.
(class_declaration "interface" name: (identifier) @name) @definition.interface
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(companion_object name: (identifier) @name) @definition.class
(class_body (function_declaration name: (identifier) @name) @definition.method)
(enum_class_body (function_declaration name: (identifier) @name) @definition.method)
(function_declaration name: (identifier) @name) @definition.function
; Properties of a class or object, and top-level ones; not a function's locals.
(class_body
  (property_declaration (variable_declaration (identifier) @name)) @definition.property)
(enum_class_body
  (property_declaration (variable_declaration (identifier) @name)) @definition.property)
(source_file
  (property_declaration (variable_declaration (identifier) @name)) @definition.property)
(type_alias type: (identifier) @name) @definition.type
