; Python methods (the crate's tags query, after these, calls every def a function).
(class_definition
  body: (block (function_definition name: (identifier) @name) @definition.method))
(class_definition
  body: (block
    (decorated_definition
      definition: (function_definition name: (identifier) @name) @definition.method)))
