; Shell functions (`name() { … }`, `function name { … }`): tree-sitter-bash ships no tags
; query.
(function_definition name: (word) @name) @definition.function
