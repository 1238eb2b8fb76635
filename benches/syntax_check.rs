//! Criterion benchmarks of the syntax check every proposal gets (tree-sitter parses of the
//! result, and of the original when the result has errors) on generated Rust files of 4 KB,
//! 40 KB and 400 KB: the check of an edit whose original was parsed before (its parse is kept
//! by hash; the result is parsed from its tree), the first edit of a file (the result parsed
//! whole), and, for scale, the merge it follows (SEARCH/REPLACE) and one bare parse.

mod common;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use patchgate::edit::{blocks, text::Text};
use patchgate::syntax::check::errors_of;
use patchgate::syntax::parse::parse;
use patchgate::syntax::{Lang, new_errors};

/// A Rust-like source file of about `bytes` bytes, every function distinct; `salt` makes the
/// text differ (a cold cache) without changing its shape.
fn source(bytes: usize, salt: usize) -> String {
    common::rust_source(
        bytes,
        &format!("// build {salt}\nuse std::collections::HashMap;\n\n"),
    )
}

fn bench_size(c: &mut Criterion, label: &str, bytes: usize) {
    let old = source(bytes, 0);
    let n = old.matches("pub fn compute_").count();
    let k = n / 2;
    let edit = format!(
        "<<<<<<< SEARCH\n    let base = input.wrapping_mul({k});\n=======\n    let base = input.wrapping_mul({k}).rotate_left(3);\n>>>>>>> REPLACE\n"
    );
    let text = Text::from_content(&old);
    let new = blocks::merge(&text, &edit).unwrap().content;
    assert!(new_errors("bench.rs", Some(&old), &new).is_empty());
    c.bench_function(&format!("merge blocks {label}"), |b| {
        b.iter(|| blocks::merge(black_box(&text), black_box(&edit)).unwrap())
    });
    // The original parsed before (it was the last edit's result: its parse is kept), the
    // result new every time.
    assert_eq!(errors_of(Lang::Rust, &old), Some(Vec::new()));
    let mut n = 0;
    c.bench_function(
        &format!("syntax check {label} (original parsed before)"),
        |b| {
            b.iter_batched(
                || {
                    n += 1;
                    old.replacen(
                        &format!("wrapping_mul({k});"),
                        &format!("wrapping_mul({k}).rotate_left({});", n % 63 + 1),
                        1,
                    )
                },
                |new| new_errors("bench.rs", Some(&old), &new),
                criterion::BatchSize::LargeInput,
            )
        },
    );
    // For scale: one tree-sitter parse of the result from nothing, the floor of the check of
    // a file never parsed before.
    c.bench_function(&format!("tree-sitter parse alone {label}"), |b| {
        b.iter(|| parse(Lang::Rust, black_box(&new), None).unwrap())
    });
    // Both texts new to the check every time (the first edit of a file).
    let mut salt = 0;
    c.bench_function(
        &format!("syntax check {label} (original never parsed)"),
        |b| {
            b.iter_batched(
                || {
                    salt += 1;
                    let old = source(bytes, salt);
                    let new = blocks::merge(&Text::from_content(&old), &edit)
                        .unwrap()
                        .content;
                    (old, new)
                },
                |(old, new)| new_errors("bench.rs", Some(&old), &new),
                criterion::BatchSize::LargeInput,
            )
        },
    );
}

fn benches(c: &mut Criterion) {
    bench_size(c, "4KB", 4 << 10);
    bench_size(c, "40KB", 40 << 10);
    bench_size(c, "400KB", 400 << 10);
}

criterion_group! {
    name = syntax;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(syntax);
