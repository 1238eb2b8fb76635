; Rust definitions the crate's tags query (after these) leaves out or names otherwise. Where
; two patterns capture one node, the first one's kind is taken: the crate's query calls every
; function in a `declaration_list` a method, also in an inline `mod` or an `extern` block.
(mod_item
  body: (declaration_list (function_item name: (identifier) @name) @definition.function))
(foreign_mod_item
  body: (declaration_list
    (function_signature_item name: (identifier) @name) @definition.function))
(declaration_list
  (function_signature_item name: (identifier) @name) @definition.method)
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
