; JSON object keys, at any depth (the name without its quotes).
(pair key: (string (string_content) @name)) @definition.key
