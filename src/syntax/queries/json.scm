; JSON object keys, in the tags convention.
(pair key: (string (string_content) @name)) @definition.key
