//! Paths whose contents are secrets or gate configuration: environment files (`.env*`),
//! private keys and credential stores, `.patchgate.toml` and anything under `.git/`. Edits of
//! them always wait for a person (the policy); the code search never indexes or shows them,
//! whatever a repository's ignore files say (docs/DESIGN.md §7).

/// File extensions of private keys and key stores.
const KEY_EXTENSIONS: [&str; 7] = ["pem", "key", "p12", "pfx", "jks", "keystore", "ppk"];

/// File names of credential stores and SSH private keys.
const SECRET_NAMES: [&str; 9] = [
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "credentials",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
];

/// Whether the root-relative path `rel` is an environment file or the gate's configuration:
/// an edit of it always waits for a person.
pub fn is_gate_or_env_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == super::config::FILE_NAME || name.to_ascii_lowercase().starts_with(".env")
}

/// Whether the root-relative path `rel` must never be searched or shown: an environment
/// file, the gate's configuration, a private key or credential store, or anything in `.git`.
pub fn is_secret(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map(|(_, e)| e);
    is_gate_or_env_file(rel)
        || rel.split('/').any(|part| part == ".git")
        || SECRET_NAMES.contains(&name.as_str())
        || ext.is_some_and(|e| KEY_EXTENSIONS.contains(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_files_keys_and_git_are_secret_and_code_is_not() {
        for rel in [
            ".env",
            "app/.env.local",
            ".ENV.production",
            ".patchgate.toml",
            "certs/server.pem",
            "deploy/id_ed25519",
            ".git/config",
            "vendor/.git/HEAD",
            "home/.netrc",
        ] {
            assert!(is_secret(rel), "{rel}");
        }
        for rel in [
            "src/env.rs",
            "src/keys.rs",
            "docs/id_rsa.md",
            "id_rsa.pub",
            "a/gitignore",
        ] {
            assert!(!is_secret(rel), "{rel}");
        }
        assert!(is_gate_or_env_file("x/.env.test"));
        assert!(!is_gate_or_env_file("certs/server.pem"));
    }
}
