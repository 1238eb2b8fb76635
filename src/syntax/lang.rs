//! The languages patchgate parses with tree-sitter: which one a path is (by its extension, else
//! its shebang), and each one's grammar. C++, C#, Ruby, Kotlin and Swift are built in only
//! with their cargo features (`lang-all`): their parse tables are large.

use tree_sitter::Language;

/// A language with a tree-sitter grammar built in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// Rust.
    Rust,
    /// Python.
    Python,
    /// JavaScript (with JSX).
    JavaScript,
    /// TypeScript.
    TypeScript,
    /// TypeScript with JSX.
    Tsx,
    /// Go.
    Go,
    /// Java.
    Java,
    /// C.
    C,
    /// C++.
    Cpp,
    /// C#.
    CSharp,
    /// Ruby.
    Ruby,
    /// Kotlin.
    Kotlin,
    /// Swift.
    Swift,
    /// PHP (with its HTML around `<?php`).
    Php,
    /// Lua.
    Lua,
    /// Bash and POSIX shell.
    Bash,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
    /// TOML.
    Toml,
    /// HTML.
    Html,
    /// CSS.
    Css,
}

impl Lang {
    /// Every language, for tests and listings.
    pub const ALL: [Lang; 21] = [
        Lang::Rust,
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Go,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
        Lang::CSharp,
        Lang::Ruby,
        Lang::Kotlin,
        Lang::Swift,
        Lang::Php,
        Lang::Lua,
        Lang::Bash,
        Lang::Json,
        Lang::Yaml,
        Lang::Toml,
        Lang::Html,
        Lang::Css,
    ];

    /// The language of `path` among those built in: by its extension (or a well-known file
    /// name), else by the shebang on `first_line` (`#!/usr/bin/env python3`, `#!/bin/sh`).
    pub fn of(path: &str, first_line: &str) -> Option<Lang> {
        Lang::named(path, first_line).filter(|l| l.grammar().is_some())
    }

    /// [`Lang::of`] for a file at `path` whose text is `text` (its first line for a shebang).
    pub fn of_text(path: &str, text: &str) -> Option<Lang> {
        Lang::of(path, text.lines().next().unwrap_or(""))
    }

    /// [`Lang::of_text`], the language's grammar built in or not.
    pub fn named_of_text(path: &str, text: &str) -> Option<Lang> {
        Lang::named(path, text.lines().next().unwrap_or(""))
    }

    /// The language of `path`, built in or not.
    fn named(path: &str, first_line: &str) -> Option<Lang> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let ext = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        Lang::by_extension(&ext)
            .or_else(|| Lang::by_name(name))
            .or_else(|| Lang::by_shebang(first_line))
    }

    fn by_extension(ext: &str) -> Option<Lang> {
        Some(match ext {
            "rs" => Lang::Rust,
            "py" | "pyi" | "pyw" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "java" => Lang::Java,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" | "tpp" => {
                Lang::Cpp
            }
            "cs" => Lang::CSharp,
            "rb" | "rake" | "gemspec" | "ru" => Lang::Ruby,
            "kt" | "kts" => Lang::Kotlin,
            "swift" => Lang::Swift,
            "php" | "phtml" => Lang::Php,
            "lua" => Lang::Lua,
            "sh" | "bash" => Lang::Bash,
            "json" => Lang::Json,
            "yaml" | "yml" => Lang::Yaml,
            "toml" => Lang::Toml,
            "html" | "htm" => Lang::Html,
            "css" => Lang::Css,
            _ => return None,
        })
    }

    fn by_name(name: &str) -> Option<Lang> {
        Some(match name {
            "Rakefile" | "Gemfile" | "Guardfile" | "Vagrantfile" => Lang::Ruby,
            ".bashrc" | ".bash_profile" | ".profile" | ".zshrc" => Lang::Bash,
            "Cargo.lock" | "Pipfile" => Lang::Toml,
            _ => return None,
        })
    }

    fn by_shebang(first_line: &str) -> Option<Lang> {
        let line = first_line.strip_prefix("#!")?;
        let mut words = line.split_whitespace();
        let mut prog = words.next()?.rsplit('/').next()?;
        if prog == "env" {
            // `env -S prog`, `env prog`: the first word that is no option.
            prog = words.find(|w| !w.starts_with('-'))?;
        }
        let prog = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match prog {
            "python" => Lang::Python,
            "node" | "deno" | "bun" => Lang::JavaScript,
            "ruby" => Lang::Ruby,
            "php" => Lang::Php,
            "lua" | "luajit" => Lang::Lua,
            "sh" | "bash" | "dash" | "ksh" | "zsh" => Lang::Bash,
            _ => return None,
        })
    }

    /// Its grammar, when it is built in.
    pub fn grammar(self) -> Option<Language> {
        Some(match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Lang::Lua => tree_sitter_lua::LANGUAGE.into(),
            Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
            Lang::Json => tree_sitter_json::LANGUAGE.into(),
            Lang::Yaml => tree_sitter_yaml::LANGUAGE.into(),
            Lang::Toml => tree_sitter_toml_ng::LANGUAGE.into(),
            Lang::Html => tree_sitter_html::LANGUAGE.into(),
            Lang::Css => tree_sitter_css::LANGUAGE.into(),
            Lang::Cpp | Lang::CSharp | Lang::Ruby | Lang::Kotlin | Lang::Swift => {
                return optional_grammar(self);
            }
        })
    }

    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Python => "Python",
            Lang::JavaScript => "JavaScript",
            Lang::TypeScript => "TypeScript",
            Lang::Tsx => "TSX",
            Lang::Go => "Go",
            Lang::Java => "Java",
            Lang::C => "C",
            Lang::Cpp => "C++",
            Lang::CSharp => "C#",
            Lang::Ruby => "Ruby",
            Lang::Kotlin => "Kotlin",
            Lang::Swift => "Swift",
            Lang::Php => "PHP",
            Lang::Lua => "Lua",
            Lang::Bash => "shell",
            Lang::Json => "JSON",
            Lang::Yaml => "YAML",
            Lang::Toml => "TOML",
            Lang::Html => "HTML",
            Lang::Css => "CSS",
        }
    }
}

/// The grammars of the languages behind cargo features.
fn optional_grammar(lang: Lang) -> Option<Language> {
    match lang {
        #[cfg(feature = "lang-cpp")]
        Lang::Cpp => Some(tree_sitter_cpp::LANGUAGE.into()),
        #[cfg(feature = "lang-csharp")]
        Lang::CSharp => Some(tree_sitter_c_sharp::LANGUAGE.into()),
        #[cfg(feature = "lang-ruby")]
        Lang::Ruby => Some(tree_sitter_ruby::LANGUAGE.into()),
        #[cfg(feature = "lang-kotlin")]
        Lang::Kotlin => Some(tree_sitter_kotlin_ng::LANGUAGE.into()),
        #[cfg(feature = "lang-swift")]
        Lang::Swift => Some(tree_sitter_swift::LANGUAGE.into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_then_name_then_shebang() {
        assert_eq!(Lang::of("src/main.rs", ""), Some(Lang::Rust));
        assert_eq!(Lang::of("a/b/App.TSX", ""), Some(Lang::Tsx));
        assert_eq!(Lang::named("lib/x.hpp", ""), Some(Lang::Cpp));
        assert_eq!(Lang::named("Rakefile", ""), Some(Lang::Ruby));
        // Built in only with its feature.
        assert_eq!(
            Lang::of("lib/x.hpp", "").is_some(),
            cfg!(feature = "lang-cpp")
        );
        assert_eq!(
            Lang::of("bin/tool", "#!/usr/bin/env python3"),
            Some(Lang::Python)
        );
        assert_eq!(Lang::of("bin/run", "#!/bin/sh -e"), Some(Lang::Bash));
        assert_eq!(
            Lang::of("bin/x", "#!/usr/bin/env -S node --harmony"),
            Some(Lang::JavaScript)
        );
        assert_eq!(Lang::of("notes.txt", "plain text"), None);
        assert_eq!(Lang::of("Makefile", ""), None);
    }
}
