//! How alike two lines are, one measure for the engines and the unseen-deletion measure
//! (docs/DESIGN.md §4, §5.1): character bigrams and words compared by Dice, long lines by
//! their common start and end, and two settings of one key (`key: value`, `key = value`) as
//! alike as a changed line must be at its place.

/// The sorted hashes of the character bigrams of a line without its whitespace (a single
/// character counts as its own bigram).
pub(crate) fn bigrams(line: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    for c in line.chars().filter(|c| !c.is_whitespace()) {
        if let Some(p) = prev {
            out.push(
                u32::from(p).wrapping_mul(0x9E37_79B1) ^ u32::from(c).wrapping_mul(0x85EB_CA6B),
            );
        }
        prev = Some(c);
    }
    if out.is_empty()
        && let Some(c) = prev
    {
        out.push(u32::from(c));
    }
    out.sort_unstable();
    out
}

/// Dice similarity of two sorted lists (repeats count).
pub(crate) fn dice<T: Ord>(a: &[T], b: &[T]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f32 / (a.len() + b.len()) as f32
}

/// The words of a line (identifiers, numbers), sorted.
fn words(line: &str) -> Vec<&str> {
    let mut w: Vec<&str> = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    w.sort_unstable();
    w
}

/// How alike two lines are (0..1): the mean of their character-bigram and word Dice
/// coefficients, or, for long lines, the share of the shorter one that their common start
/// and end cover (`f(a, OLD)` → `f(a, NEW)`), whichever is higher. Blank lines are alike
/// to nothing.
pub(crate) fn similarity(a: &str, b: &str) -> f32 {
    if a.trim().is_empty() || b.trim().is_empty() {
        return 0.0;
    }
    let chars = dice(&bigrams(a), &bigrams(b));
    let (wa, wb) = (words(a), words(b));
    let words = if wa.is_empty() && wb.is_empty() {
        chars
    } else {
        dice(&wa, &wb)
    };
    let same_key = same_setting(a, b);
    let floor = if same_key { SAME_KEY_SIMILARITY } else { 0.0 };
    ((chars + words) / 2.0).max(shared_ends(a, b)).max(floor)
}

/// Whether two lines set the same key (`uses: a@v1`, `uses: a@v2`), or update the same
/// target with the same operator (`n += 2`, `n += 1`).
pub(crate) fn same_setting(a: &str, b: &str) -> bool {
    matches!((setting_key(a), setting_key(b)), (Some(x), Some(y)) if x == y)
        || matches!((compound(a), compound(b)), (Some(x), Some(y)) if x == y)
}

/// Whether `name` reads as one name: a letter or `_` first, then letters, digits and `also`.
fn name_like(name: &str, also: &[char]) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || also.contains(&c))
}

/// The target and operator of a compound assignment (`n += 2` → (`n`, `+`); `flags |= F`),
/// a target being one word, with the kind of its value ([`ValueKind`]).
fn compound(line: &str) -> Option<(&str, &str, ValueKind)> {
    let t = line.trim();
    let end = t.find('=')?;
    let head = t[..end].trim_end();
    let target = head.trim_end_matches(['+', '-', '*', '/', '%', '|', '&', '^', '<', '>', '?']);
    let op = &head[target.len()..];
    let target = target.trim();
    let word = name_like(target, &['_', '.']);
    let rest = t[end + 1..].trim();
    let real = !op.is_empty() && !matches!(op, "<" | ">") && !rest.starts_with('=');
    (word && real && !rest.is_empty()).then(|| (target, op, value_kind(rest)))
}

/// The kind of a compound assignment's value. Two updates of one target are versions of one
/// line when their values are of one kind (`n += 2` / `n += 1`, `flags |= A` / `flags |= B`);
/// a target a file updates in turn with values of other kinds is a run of statements
/// (`html += "<li>"`, `html += escape(it)`), a new one going beside the old ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    Number,
    Text,
    Call,
    Name,
    Other,
}

fn value_kind(value: &str) -> ValueKind {
    let v = value.trim_end_matches([';', ',']).trim();
    let unsigned = v.strip_prefix('-').unwrap_or(v);
    // A string with its prefix (`f"…"`, `b'…'`, `r"…"`).
    let unprefixed = v.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    if unsigned.starts_with(|c: char| c.is_ascii_digit()) {
        ValueKind::Number
    } else if unprefixed.starts_with(['"', '\'', '`']) && v.len() - unprefixed.len() <= 2 {
        ValueKind::Text
    } else if v.contains('(') {
        ValueKind::Call
    } else if v.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        ValueKind::Name
    } else {
        ValueKind::Other
    }
}

/// How alike two settings of one key are (`uses: a@v1` and `uses: a@v2`), whatever the
/// values: as alike as a changed line must be at its place.
const SAME_KEY_SIMILARITY: f32 = 0.6;

/// Keywords that may start a `NAME = value` declaration.
const DECLARATION_WORDS: [&str; 8] = [
    "export", "local", "let", "const", "var", "val", "my", "readonly",
];

/// The key of a `key: value` or `key = value` line (a YAML list's `- ` and quotes aside).
pub(crate) fn setting_key(line: &str) -> Option<&str> {
    let mut t = line.trim().trim_start_matches("- ");
    // A declaration's keyword is not part of its name (`local y = 2`, `const x = 1`).
    for word in DECLARATION_WORDS {
        if let Some(rest) = t.strip_prefix(word).and_then(|r| r.strip_prefix(' ')) {
            t = rest.trim_start();
            break;
        }
    }
    let end = t.find([':', '='])?;
    let (key, rest) = (t[..end].trim().trim_matches(['"', '\'']), &t[end + 1..]);
    let word = name_like(key, &['_', '-', '.']);
    let rest = if t[end..].starts_with(":=") {
        &rest[1..]
    } else {
        rest
    };
    (word && !rest.starts_with(['=', ':']) && !rest.trim().is_empty()).then_some(key)
}

/// Lines shorter than this (without whitespace) are not compared by their shared ends.
const SHARED_ENDS_MIN_CHARS: usize = 30;

/// The share of the shorter line that the two lines' common start and end cover, for long
/// lines that start alike.
fn shared_ends(a: &str, b: &str) -> f32 {
    let sa: Vec<char> = a.chars().filter(|c| !c.is_whitespace()).collect();
    let sb: Vec<char> = b.chars().filter(|c| !c.is_whitespace()).collect();
    let shorter = sa.len().min(sb.len());
    if shorter < SHARED_ENDS_MIN_CHARS {
        return 0.0;
    }
    let prefix = sa.iter().zip(&sb).take_while(|(x, y)| x == y).count();
    if prefix * 2 < shorter {
        return 0.0;
    }
    let suffix = sa
        .iter()
        .rev()
        .zip(sb.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (prefix + suffix).min(shorter) as f32 / sa.len().max(sb.len()) as f32
}
