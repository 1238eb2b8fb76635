//! What several benchmarks share: a generated Rust-like source file.

/// A Rust-like source file of about `bytes` bytes after `head`, every function distinct.
pub(crate) fn rust_source(bytes: usize, head: &str) -> String {
    let mut s = String::from(head);
    let mut i = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "/// Computes value number {i}.\npub fn compute_{i}(input: u64, table: &HashMap<u64, u64>) -> u64 {{\n    let base = input.wrapping_mul({i});\n    match table.get(&base) {{\n        Some(v) => v + {i},\n        None => base ^ 0x{i:x},\n    }}\n}}\n\n"
        ));
        i += 1;
    }
    s
}
