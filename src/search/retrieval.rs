//! Retrieval (`agentic_retrieval`): the index's best hits are the hints; each hint's best
//! definitions are followed to where they are used, and the names those definitions call
//! are followed to where they are defined. The answer lists the hints first, then the files
//! the links reach (most links first), each with the ranges that hold the link.

use std::collections::HashMap;

use super::index::{FileEntry, Index};
use super::rank::{self, Hit};
use super::{Answer, explain, merge_ranges};

/// How many hits become hints.
pub const HINTS: usize = 5;
/// How many names of one hint's units are followed.
const NAMES_PER_HINT: usize = 6;
/// How many ranges the links add to a hint.
const EXTRA_PER_HINT: usize = 2;
/// How many ranges a reached file shows.
const MAX_RANGES: usize = 3;

/// A file the links reached, with the ranges and names that link it.
#[derive(Debug, Default)]
struct Reached {
    links: usize,
    ranges: Vec<[u32; 2]>,
    names: Vec<String>,
}

fn range_of(file: &FileEntry, unit: usize) -> [u32; 2] {
    let u = &file.units[unit];
    [u.start + 1, u.end.max(u.start + 1)]
}

/// The units of `file` whose ranges a hit reported.
fn hit_units<'a>(file: &'a FileEntry, hit: &Hit) -> impl Iterator<Item = usize> + 'a {
    let ranges = hit.ranges.clone();
    (0..file.units.len()).filter(move |&k| ranges.contains(&range_of(file, k)))
}

/// The names a unit mentions that the index defines elsewhere, rarest first.
fn called_names(index: &Index, file: &FileEntry, unit: usize) -> Vec<u32> {
    let u = &file.units[unit];
    let mut names: Vec<u32> = u
        .terms
        .iter()
        .map(|&(t, _)| t)
        .filter(|&t| Some(t) != u.name_term && !index.definitions(t).is_empty())
        .collect();
    names.sort_by(|&a, &b| index.idf(b).total_cmp(&index.idf(a)));
    names
}

/// The units (other than in `skip`) that mention a name's whole term: (file, unit).
fn references(index: &Index, name: u32, skip: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for &(f, _) in index.postings(name) {
        let f = f as usize;
        if f == skip {
            continue;
        }
        let file = &index.files()[f];
        let best = file
            .units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.terms.binary_search_by_key(&name, |&(t, _)| t).is_ok())
            .min_by_key(|(_, u)| u.end - u.start);
        if let Some((k, _)) = best {
            out.push((f, k));
        }
    }
    out
}

fn reach(map: &mut HashMap<usize, Reached>, file: &FileEntry, f: usize, unit: usize, name: &str) {
    let r = map.entry(f).or_default();
    r.links += 1;
    let range = range_of(file, unit);
    if !r.ranges.contains(&range) {
        r.ranges.push(range);
    }
    if !r.names.iter().any(|n| n == name) {
        r.names.push(name.to_string());
    }
}

/// Follow the hints' names through the index.
fn follow(index: &Index, hints: &[Hit], keep: &dyn Fn(&str) -> bool) -> HashMap<usize, Reached> {
    let mut reached: HashMap<usize, Reached> = HashMap::new();
    for hit in hints {
        let Some(hf) = index.position(&hit.path) else {
            continue;
        };
        let file = &index.files()[hf];
        for unit in hit_units(file, hit).collect::<Vec<_>>() {
            // Where this definition is used.
            if let (Some(t), Some(name)) = (file.units[unit].name_term, &file.units[unit].name) {
                for (f, k) in references(index, t, hf) {
                    reach(&mut reached, &index.files()[f], f, k, name);
                }
            }
            // Where the names it uses are defined.
            for t in called_names(index, file, unit)
                .into_iter()
                .take(NAMES_PER_HINT)
            {
                for &(f, k) in index.definitions(t) {
                    let (f, k) = (f as usize, k as usize);
                    let target = &index.files()[f];
                    let name = target.units[k].name.clone().unwrap_or_default();
                    reach(&mut reached, target, f, k, &name);
                }
            }
        }
    }
    reached.retain(|&f, _| keep(&index.files()[f].path));
    reached
}

/// The retrieval answer: hints, then the files their links reach, at most `limit` in all.
pub fn retrieve(index: &Index, query: &str, limit: usize, keep: &dyn Fn(&str) -> bool) -> Answer {
    let hints = rank::rank(index, query, HINTS.min(limit), keep);
    let mut reached = follow(index, &hints, keep);
    let mut files: Vec<(String, Vec<[u32; 2]>)> = Vec::new();
    let mut explanation = explain(&hints, index.len());
    for h in &hints {
        let mut ranges = h.ranges.clone();
        if let Some(pos) = index.position(&h.path)
            && let Some(r) = reached.remove(&pos)
        {
            let mut more = r.ranges;
            more.retain(|x| !h.ranges.contains(x));
            more.sort_by_key(|[a, b]| b - a);
            ranges.extend(more.into_iter().take(EXTRA_PER_HINT));
        }
        merge_ranges(&mut ranges);
        files.push((h.path.clone(), ranges));
    }
    let mut rest: Vec<(usize, Reached)> = reached.into_iter().collect();
    // Most links first, program source before tests and prose.
    let weight = |(f, r): &(usize, Reached)| r.links as f64 * rank::prior(index.files()[*f].kind);
    rest.sort_by(|a, b| {
        weight(b)
            .total_cmp(&weight(a))
            .then_with(|| index.files()[a.0].path.cmp(&index.files()[b.0].path))
    });
    let mut followed = Vec::new();
    for (f, mut r) in rest.into_iter().take(limit.saturating_sub(files.len())) {
        r.ranges.sort_by_key(|[a, b]| b - a);
        r.ranges.truncate(MAX_RANGES);
        merge_ranges(&mut r.ranges);
        let path = index.files()[f].path.clone();
        followed.push(format!("{path} ({})", r.names.join(", ")));
        files.push((path, r.ranges));
    }
    if !followed.is_empty() {
        explanation.push_str(&format!(
            " Following their definitions and uses led to: {}.",
            followed.join("; ")
        ));
    }
    Answer {
        query: query.to_string(),
        explanation,
        files,
        hints_used: Some(hints.len()),
        ..Answer::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_leads_to_the_definitions_it_calls_and_to_its_users() {
        let mut ix = Index::new();
        ix.add(
            "auth/login.py",
            0,
            0,
            "def check_password(user, secret):\n    return hash_secret(secret) == user.digest\n",
        );
        ix.add(
            "crypto.py",
            0,
            0,
            "import os\n\ndef hash_secret(s):\n    return sha(s)\n",
        );
        ix.add(
            "views.py",
            0,
            0,
            "def login_view(request):\n    if check_password(request.user, request.form):\n        return ok()\n",
        );
        ix.add("unrelated.py", 0, 0, "def other():\n    pass\n");
        ix.finish();
        let a = retrieve(&ix, "digest", 10, &|_| true);
        let paths: Vec<&str> = a.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths[0], "auth/login.py");
        assert!(paths.contains(&"crypto.py"), "{paths:?}");
        assert!(paths.contains(&"views.py"), "{paths:?}");
        assert!(!paths.contains(&"unrelated.py"));
        let crypto = &a.files.iter().find(|(p, _)| p == "crypto.py").unwrap().1;
        assert_eq!(crypto, &vec![[3, 4]]);
        assert_eq!(a.hints_used, Some(1));
        let denied = retrieve(&ix, "digest", 10, &|p| p != "crypto.py");
        assert!(denied.files.iter().all(|(p, _)| p != "crypto.py"));
    }
}
