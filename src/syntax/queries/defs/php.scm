; PHP methods (the crate's tags query, after this, calls them functions).
(method_declaration name: (name) @name) @definition.method
