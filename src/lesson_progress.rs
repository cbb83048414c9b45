//! Lesson progress kept across visits (localStorage `kubeloop.lessons.v1`): per lesson, how
//! many of its steps the learner completed at best. One line per lesson, `id done total`;
//! whatever cannot be read is dropped, never an error.

use std::collections::BTreeMap;

/// Progress per lesson id (the scenario's `metadata.name`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress(BTreeMap<String, (usize, usize)>);

impl Progress {
    /// Reads the stored text.
    pub fn parse(text: &str) -> Progress {
        let mut map = BTreeMap::new();
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            let (Some(id), Some(done), Some(total), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if let (Ok(done), Ok(total)) = (done.parse::<usize>(), total.parse::<usize>()) {
                if done <= total && total > 0 {
                    map.insert(id.to_string(), (done, total));
                }
            }
        }
        Progress(map)
    }

    /// The text to store.
    pub fn to_text(&self) -> String {
        self.0
            .iter()
            .map(|(id, (d, t))| format!("{id} {d} {t}\n"))
            .collect()
    }

    /// `(done, total)` for a lesson the learner started.
    pub fn get(&self, id: &str) -> Option<(usize, usize)> {
        self.0.get(id).copied()
    }

    /// Records `done` of `total` steps; keeps the best. True if it changed.
    pub fn record(&mut self, id: &str, done: usize, total: usize) -> bool {
        if id.is_empty() || id.contains(char::is_whitespace) || total == 0 || done > total {
            return false;
        }
        match self.0.get(id) {
            Some(&(d, t)) if t == total && d >= done => false,
            _ => {
                self.0.insert(id.to_string(), (done, total));
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_keep_the_best_progress_and_survive_a_round_trip() {
        let mut p = Progress::default();
        assert!(p.record("lesson-self-healing", 2, 4));
        assert!(
            !p.record("lesson-self-healing", 1, 4),
            "a replay from the start keeps the best"
        );
        assert!(p.record("lesson-self-healing", 4, 4));
        assert!(p.record("lesson-rollout", 0, 3));
        let back = Progress::parse(&p.to_text());
        assert_eq!(back, p);
        assert_eq!(back.get("lesson-self-healing"), Some((4, 4)));
        assert_eq!(back.get("lesson-rollout"), Some((0, 3)));
        assert_eq!(back.get("lesson-other"), None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_drop_what_it_cannot_read() {
        let p = Progress::parse("good 1 2\nbad\nworse 5 2\nnan x 3\nzero 0 0\nextra 1 2 3\n");
        assert_eq!(p.to_text(), "good 1 2\n");
        let mut p = Progress::default();
        assert!(!p.record("has space", 1, 2));
        assert!(!p.record("", 1, 2));
    }
}
