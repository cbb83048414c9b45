//! Go's `text/tabwriter` (liggitt's fork, as kubectl vendors it): elastic tabstops that align
//! tab-terminated cells into columns.
//!
//! Semantics kept from upstream: a cell is text terminated by `\t`; the text after the last
//! tab of a line is not part of any column and is never padded; a column block is a run of
//! consecutive lines that all have a cell in that column; a column is as wide as its widest
//! cell plus `padding`, and at least `minwidth`; widths are counted in characters. A line with
//! no tab flushes the writer; with `remember_widths` (kubectl's `RememberWidths`) column widths
//! survive flushes and only ever grow.

/// Tabwriter settings, named as in Go's `tabwriter.NewWriter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TabConfig {
    /// Minimal cell width, padding included.
    pub minwidth: usize,
    /// Width of a tab character; only used when `padchar` is `'\t'`.
    pub tabwidth: usize,
    /// Padding added to a cell's width.
    pub padding: usize,
    /// Character used for padding.
    pub padchar: char,
    /// Keep the widest width seen per column across flushes (liggitt's `RememberWidths`).
    pub remember_widths: bool,
}

impl TabConfig {
    /// `printers.GetNewTabWriter`: what `kubectl get` uses (`6, 4, 3, ' ', RememberWidths`).
    pub const KUBECTL_GET: TabConfig = TabConfig {
        minwidth: 6,
        tabwidth: 4,
        padding: 3,
        padchar: ' ',
        remember_widths: true,
    };

    /// What `kubectl describe` uses (`tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)`).
    pub const KUBECTL_DESCRIBE: TabConfig = TabConfig {
        minwidth: 0,
        tabwidth: 8,
        padding: 2,
        padchar: ' ',
        remember_widths: false,
    };
}

#[derive(Clone, Debug)]
struct Cell {
    text: String,
    width: usize,
}

/// A buffering tabwriter; write text with [`TabWriter::write_str`], then [`TabWriter::finish`].
#[derive(Clone, Debug)]
pub struct TabWriter {
    config: TabConfig,
    /// Complete lines not yet flushed; each is its list of cells (the last is the trailing text).
    lines: Vec<Vec<Cell>>,
    /// Cells of the line being written.
    line: Vec<Cell>,
    /// Text of the cell being written.
    cell: String,
    maxwidths: Vec<usize>,
    out: String,
}

impl TabWriter {
    /// A writer with the given settings.
    pub fn new(config: TabConfig) -> TabWriter {
        TabWriter {
            config,
            lines: Vec::new(),
            line: Vec::new(),
            cell: String::new(),
            maxwidths: Vec::new(),
            out: String::new(),
        }
    }

    /// Appends text. `\t` ends a cell, `\n` ends a line; a line without tabs flushes.
    pub fn write_str(&mut self, s: &str) {
        for ch in s.chars() {
            match ch {
                '\t' => self.terminate_cell(),
                '\n' => {
                    self.terminate_cell();
                    let line = std::mem::take(&mut self.line);
                    let ncells = line.len();
                    self.lines.push(line);
                    if ncells == 1 {
                        self.flush();
                    }
                }
                c => self.cell.push(c),
            }
        }
    }

    fn terminate_cell(&mut self) {
        let text = std::mem::take(&mut self.cell);
        let width = text.chars().count();
        self.line.push(Cell { text, width });
    }

    /// Formats and emits everything buffered so far (Go's `Flush`).
    pub fn flush(&mut self) {
        let mut lines = std::mem::take(&mut self.lines);
        let pending = !self.cell.is_empty() || !self.line.is_empty();
        if pending {
            self.terminate_cell();
            lines.push(std::mem::take(&mut self.line));
        }
        let mut widths = Vec::new();
        self.format(&lines, &mut widths, 0, lines.len());
        if pending {
            // The unterminated last line has no newline of its own.
            self.out.pop();
        }
    }

    /// Forgets remembered column widths (Go's `SetRememberedWidths(nil)`).
    pub fn reset_remembered_widths(&mut self) {
        self.maxwidths.clear();
    }

    /// Flushes and returns all output.
    pub fn finish(mut self) -> String {
        self.flush();
        self.out
    }

    fn format(&mut self, lines: &[Vec<Cell>], widths: &mut Vec<usize>, line0: usize, line1: usize) {
        let column = widths.len();
        let mut line0 = line0;
        let mut this = line0;
        while this < line1 {
            if column + 1 >= lines[this].len() {
                this += 1;
                continue;
            }
            // A cell exists in this column: print the lines before the block, then find the
            // block's extent and width.
            self.write_lines(lines, widths, line0, this);
            line0 = this;
            let mut width = self.config.minwidth;
            while this < line1 && column + 1 < lines[this].len() {
                width = width.max(lines[this][column].width + self.config.padding);
                this += 1;
            }
            if self.config.remember_widths {
                if self.maxwidths.len() < widths.len() {
                    let from = self.maxwidths.len();
                    self.maxwidths.extend_from_slice(&widths[from..]);
                }
                if self.maxwidths.len() == widths.len() {
                    self.maxwidths.push(width);
                } else if self.maxwidths[column] > width {
                    width = self.maxwidths[column];
                } else {
                    self.maxwidths[column] = width;
                }
            }
            widths.push(width);
            self.format(lines, widths, line0, this);
            widths.pop();
            line0 = this;
        }
        self.write_lines(lines, widths, line0, line1);
    }

    fn write_lines(&mut self, lines: &[Vec<Cell>], widths: &[usize], line0: usize, line1: usize) {
        for line in &lines[line0..line1] {
            for (j, cell) in line.iter().enumerate() {
                self.out.push_str(&cell.text);
                if j < widths.len() {
                    self.pad(cell.width, widths[j]);
                }
            }
            self.out.push('\n');
        }
    }

    fn pad(&mut self, textw: usize, cellw: usize) {
        if self.config.padchar == '\t' {
            if self.config.tabwidth == 0 {
                return;
            }
            let tw = self.config.tabwidth;
            let cellw = cellw.div_ceil(tw) * tw;
            let n = cellw.saturating_sub(textw);
            for _ in 0..n.div_ceil(tw) {
                self.out.push('\t');
            }
            return;
        }
        for _ in textw..cellw {
            self.out.push(self.config.padchar);
        }
    }
}

/// Aligns `text` in one go with the given settings.
pub fn align(text: &str, config: TabConfig) -> String {
    let mut w = TabWriter::new(config);
    w.write_str(text);
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_table_columns_are_padded_by_three_and_last_cell_is_not() {
        let text = "NAME\tREADY\tSTATUS\tRESTARTS\tAGE\nnginx-1\t1/1\tRunning\t0\t5m\n";
        assert_eq!(
            align(text, TabConfig::KUBECTL_GET),
            "NAME      READY   STATUS    RESTARTS   AGE\n\
             nginx-1   1/1     Running   0          5m\n"
        );
    }

    #[test]
    fn minwidth_applies_to_narrow_columns() {
        assert_eq!(align("a\tb\n", TabConfig::KUBECTL_GET), "a     b\n");
    }

    #[test]
    fn column_blocks_are_contiguous_runs_of_lines() {
        // Go's own example: b and c are in distinct columns.
        let cfg = TabConfig {
            minwidth: 0,
            tabwidth: 8,
            padding: 1,
            padchar: '.',
            remember_widths: false,
        };
        assert_eq!(
            align("aaaa\tbbb\td\naa\tb\tdd\na\t\naa\tcccc\teee\n", cfg),
            "aaaa.bbb.d\naa...b...dd\na....\naa...cccc.eee\n"
        );
    }

    #[test]
    fn remembered_widths_survive_a_flush_until_reset() {
        let mut w = TabWriter::new(TabConfig::KUBECTL_GET);
        w.write_str("longer-name\tx\n\n");
        w.write_str("a\tb\n");
        w.flush();
        w.reset_remembered_widths();
        w.write_str("\na\tb\n");
        assert_eq!(
            w.finish(),
            "longer-name   x\n\na             b\n\na     b\n"
        );
    }

    #[test]
    fn text_without_a_final_newline_is_kept_as_is() {
        assert_eq!(align("a\tb\nc", TabConfig::KUBECTL_GET), "a     b\nc");
    }
}
