use std::time::Instant;
use patchgate::edit::{lazy, Hints};
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let before = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("before.")).unwrap();
    let content = std::fs::read_to_string(&before).unwrap();
    let snippet = std::fs::read_to_string(format!("{dir}/lazy.txt")).unwrap();
    let hints = Hints::default();
    let n = 200;
    let t = Instant::now();
    for _ in 0..n { let _ = std::hint::black_box(lazy::merge(&content, &snippet, &hints)); }
    println!("merge {:?}", t.elapsed() / n);
    let (lines, _) = patchgate::edit::text::split_lines(&content);
    let t = Instant::now();
    for _ in 0..n { let _: patchgate::edit::matching::KeySet = std::hint::black_box(lines.iter().map(|l| lazy::snippet::key(l)).collect()); }
    println!("keys {:?} ({} lines, snippet {} lines)", t.elapsed() / n, lines.len(), snippet.lines().count());
    let parsed = lazy::snippet::parse(&snippet, &lines.iter().map(|l| lazy::snippet::key(l)).collect());
    let t = Instant::now();
    for _ in 0..n { let _ = std::hint::black_box(lazy::align::Facts::new(&lines, &parsed.items)); }
    println!("facts {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n { for l in &lines { std::hint::black_box(lazy::align::is_trivial(l)); } }
    println!("trivial {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n { for l in &lines { std::hint::black_box(lazy::snippet::key(l)); } }
    println!("key {:?}", t.elapsed() / n);
    let facts = lazy::align::Facts::new(&lines, &parsed.items);
    let forced = vec![false; lines.len()];
    let t = Instant::now();
    for _ in 0..n { let _ = std::hint::black_box(lazy::align::align(&parsed.items, &lines, &facts, &forced, true)); }
    println!("align {:?}", t.elapsed() / n);
}
#[allow(dead_code)]
fn unused() {}
