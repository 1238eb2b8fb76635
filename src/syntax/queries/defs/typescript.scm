; TypeScript definitions that neither the JavaScript nor the TypeScript crate's tags query
; (both after these) names: type aliases, enums, `namespace` blocks.
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.type
(internal_module name: (identifier) @name) @definition.module
