//! GNU `diff -u` output over lines: the edit script from a longest common subsequence,
//! grouped into hunks with three lines of context.

/// One line of the edit script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Keep(usize, usize),
    Del(usize),
    Add(usize),
}

fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j] = LCS length of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(Op::Keep(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(Op::Add(j));
            j += 1;
        } else {
            out.push(Op::Del(i));
            i += 1;
        }
    }
    // GNU diff lists a hunk's deletions before its additions.
    let mut k = 0;
    while k < out.len() {
        if matches!(out[k], Op::Keep(..)) {
            k += 1;
            continue;
        }
        let start = k;
        while k < out.len() && !matches!(out[k], Op::Keep(..)) {
            k += 1;
        }
        out[start..k].sort_by_key(|op| match op {
            Op::Del(i) => (0, *i),
            Op::Add(j) => (1, *j),
            Op::Keep(..) => (2, 0),
        });
    }
    out
}

fn range(start: usize, count: usize) -> String {
    match count {
        // An empty range names the line before it.
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{count}", start + 1),
    }
}

/// The hunks of `diff -u` between two texts, or None when they are equal.
pub fn hunks(old: &str, new: &str) -> Option<String> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = script(&a, &b);
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Keep(..)))
        .map(|(i, _)| i)
        .collect();
    if changed.is_empty() {
        return None;
    }
    const CONTEXT: usize = 3;
    // Group changes whose contexts touch.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for &c in &changed {
        let lo = c.saturating_sub(CONTEXT);
        let hi = (c + CONTEXT + 1).min(ops.len());
        match groups.last_mut() {
            Some((_, end)) if lo <= *end => *end = hi,
            _ => groups.push((lo, hi)),
        }
    }
    let mut out = String::new();
    for (lo, hi) in groups {
        let slice = &ops[lo..hi];
        let a_start = slice
            .iter()
            .find_map(|op| match op {
                Op::Keep(i, _) | Op::Del(i) => Some(*i),
                Op::Add(_) => None,
            })
            .unwrap_or_else(|| a_before(&ops[..lo]));
        let b_start = slice
            .iter()
            .find_map(|op| match op {
                Op::Keep(_, j) | Op::Add(j) => Some(*j),
                Op::Del(_) => None,
            })
            .unwrap_or_else(|| b_before(&ops[..lo]));
        let a_count = slice.iter().filter(|op| !matches!(op, Op::Add(_))).count();
        let b_count = slice.iter().filter(|op| !matches!(op, Op::Del(_))).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(a_start, a_count),
            range(b_start, b_count)
        ));
        for op in slice {
            match op {
                Op::Keep(i, _) => out.push_str(&format!(" {}\n", a[*i])),
                Op::Del(i) => out.push_str(&format!("-{}\n", a[*i])),
                Op::Add(j) => out.push_str(&format!("+{}\n", b[*j])),
            }
        }
    }
    Some(out)
}

fn a_before(ops: &[Op]) -> usize {
    ops.iter().filter(|op| !matches!(op, Op::Add(_))).count()
}

fn b_before(ops: &[Op]) -> usize {
    ops.iter().filter(|op| !matches!(op, Op::Del(_))).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_read_as_gnu_diff_u() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
        assert_eq!(
            hunks(old, new).unwrap(),
            "@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
        assert_eq!(hunks(old, old), None);
        assert_eq!(hunks("", "x\ny\n").unwrap(), "@@ -0,0 +1,2 @@\n+x\n+y\n");
        assert_eq!(hunks("x\n", "").unwrap(), "@@ -1 +0,0 @@\n-x\n");
        // Far-apart changes make two hunks.
        let long: String = (0..20).map(|i| format!("{i}\n")).collect();
        let changed = long.replace("2\n", "two\n").replace("17\n", "seventeen\n");
        let h = hunks(&long, &changed).unwrap();
        assert_eq!(h.matches("@@ -").count(), 2, "{h}");
        assert!(h.starts_with("@@ -1,6 +1,6 @@\n 0\n 1\n-2\n+two\n"), "{h}");
    }
}
