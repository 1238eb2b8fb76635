//! Criterion benchmarks of the merge engines on generated 40 KB and 400 KB source files:
//! SEARCH/REPLACE blocks, exact replace, unified diffs and the text model round trip.

mod common;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use patchgate::diff::unified_diff;
use patchgate::edit::{Hints, blocks, lazy, replace, text::Text, udiff};

/// A Rust-like source file of about `bytes` bytes, every function distinct.
fn source(bytes: usize) -> String {
    common::rust_source(bytes, "use std::collections::HashMap;\n\n")
}

fn bench_size(c: &mut Criterion, label: &str, bytes: usize) {
    let file = source(bytes);
    let text = Text::from_content(&file);
    let n = file.matches("pub fn compute_").count();
    let (a, b, z) = (n / 10, n / 2, n - 2);
    let block = |k: usize| {
        format!(
            "<<<<<<< SEARCH\n    let base = input.wrapping_mul({k});\n=======\n    let base = input.wrapping_mul({k}).rotate_left(3);\n>>>>>>> REPLACE\n"
        )
    };
    let blocks_edit = format!("{}{}{}", block(a), block(b), block(z));
    let replace_edit = replace::parse_json(&format!(
        r#"{{"search_content": "None => base ^ 0x{b:x},", "replace_content": "None => base,"}}"#
    ))
    .unwrap();
    let changed = file
        .replace(
            &format!("wrapping_mul({a});"),
            &format!("wrapping_mul({a} + 1);"),
        )
        .replace(
            &format!("Some(v) => v + {z},"),
            &format!("Some(v) => v * {z},"),
        );
    let diff = unified_diff("src/lib.rs", &file, &changed);
    let snippet = format!(
        "// ... existing code ...\npub fn compute_{b}(input: u64, table: &HashMap<u64, u64>) -> u64 {{\n    let base = input.wrapping_mul({b}).rotate_left(1);\n    match table.get(&base) {{\n// ... existing code ...\n"
    );
    let hints = Hints {
        path: Some("src/lib.rs"),
        instruction: None,
    };

    let mut g = c.benchmark_group(label);
    g.bench_function("blocks_3", |bn| {
        bn.iter(|| blocks::merge(black_box(&text), black_box(&blocks_edit)).unwrap())
    });
    g.bench_function("replace_1", |bn| {
        bn.iter(|| replace::apply(black_box(&file), black_box(&replace_edit)).unwrap())
    });
    g.bench_function("udiff_2_hunks", |bn| {
        bn.iter(|| udiff::merge(black_box(&file), black_box(&diff)).unwrap())
    });
    g.bench_function("lazy_1_region", |bn| {
        bn.iter(|| lazy::merge(black_box(&file), black_box(&snippet), &hints).unwrap())
    });
    g.bench_function("decode_encode", |bn| {
        bn.iter(|| {
            let t = Text::decode(black_box(file.as_bytes())).unwrap();
            t.encode(t.content()).unwrap()
        })
    });
    g.finish();
}

fn engines(c: &mut Criterion) {
    bench_size(c, "40KB", 40 * 1024);
    bench_size(c, "400KB", 400 * 1024);
}

criterion_group!(benches, engines);
criterion_main!(benches);
