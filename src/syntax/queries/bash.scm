; Shell functions, in the tags convention.
(function_definition name: (word) @name) @definition.function
