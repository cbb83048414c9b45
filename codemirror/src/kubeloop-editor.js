// The page's code editor: one CodeMirror 6 view over the scenario's files, YAML mode,
// the page's diagnostics (from Rust's `editor_errors`) as squiggles and gutter markers,
// search, and one undo history per file. Rust owns the files (Session::set_file); this
// module only shows one at a time and reports edits.
import { EditorState, Compartment, Annotation, StateField, StateEffect, RangeSet } from '@codemirror/state';
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, highlightSpecialChars, GutterMarker, lineNumberMarkers,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentMore, indentLess, redo } from '@codemirror/commands';
import { syntaxHighlighting, HighlightStyle, indentOnInput, bracketMatching } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';
import { yaml } from '@codemirror/lang-yaml';
import { setDiagnostics, lintGutter } from '@codemirror/lint';
import { search, searchKeymap, highlightSelectionMatches } from '@codemirror/search';

// The page's colors (public/kubeloop.css): the same classes the old highlighter used.
const colors = HighlightStyle.define([
  { tag: [t.propertyName, t.definition(t.propertyName)], color: '#7cc4ff' },
  { tag: [t.string, t.special(t.string), t.content], color: '#9be28c' },
  { tag: t.number, color: '#f7b955' },
  { tag: [t.bool, t.null, t.atom, t.keyword], color: '#c4a5ff' },
  { tag: t.comment, color: '#8595b2', fontStyle: 'italic' },
  { tag: [t.punctuation, t.separator, t.meta, t.processingInstruction], color: '#7d8aa5' },
  { tag: [t.labelName, t.typeName, t.tagName], color: '#f59ac8' },
]);

const theme = EditorView.theme({
  '&': { height: '100%', color: '#cbd5e1', backgroundColor: 'var(--inset)', font: '13px/20px var(--mono)' },
  '&.cm-focused': { outline: '2px solid var(--accent)', outlineOffset: '-2px' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '20px', overflow: 'auto' },
  '.cm-content': { caretColor: '#f8fafc', padding: '12px 0' },
  '.cm-line': { padding: '0 14px' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: '#f8fafc' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection':
    { backgroundColor: 'rgba(79,140,255,.35)' },
  '.cm-gutters': { backgroundColor: '#0a1020', color: '#8190ad', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'rgba(79,140,255,.06)' },
  '.cm-activeLineGutter': { backgroundColor: 'rgba(79,140,255,.12)', color: '#e3e9f4' },
  '.cm-lineNumbers .cm-gutterElement': { padding: '0 8px 0 10px', minWidth: '28px' },
  '.cm-searchMatch': { backgroundColor: 'rgba(245,184,61,.28)', outline: '1px solid rgba(245,184,61,.6)' },
  '.cm-searchMatch.cm-searchMatch-selected': { backgroundColor: 'rgba(245,184,61,.55)' },
  '.cm-panels': { backgroundColor: 'var(--panel)', color: 'var(--text)', borderColor: 'var(--border)' },
  '.cm-panels input, .cm-panels button': { font: '12px var(--sans)', color: 'var(--text)' },
  '.cm-textfield': { backgroundColor: 'var(--inset)', border: '1px solid var(--border-2)', borderRadius: '5px' },
  '.cm-button': { backgroundImage: 'none', backgroundColor: '#16213b', border: '1px solid var(--border-2)', borderRadius: '5px' },
  '.cm-tooltip': { backgroundColor: 'var(--panel-2)', color: 'var(--text)', border: '1px solid var(--border-2)' },
  '.cm-diagnostic-error': { borderLeftColor: 'var(--red)', color: '#fecaca' },
  '.cm-lintRange-error': { backgroundColor: 'rgba(239,68,68,.14)' },
  '.cm-gutter-lint': { width: '14px' },
  '.cm-lineNumbers .cm-gutterElement.cm-error-line': { color: '#fff', fontWeight: '700', background: 'linear-gradient(90deg, transparent, rgba(239,68,68,.55))' },
}, { dark: true });

/** Line numbers of lines with a problem carry this class (`cm-error-line`). */
const errorLine = new (class extends GutterMarker {
  get elementClass() { return 'cm-error-line'; }
})();
const setErrorLines = StateEffect.define();
const errorLines = StateField.define({
  create: () => RangeSet.empty,
  update(set, tr) {
    set = set.map(tr.changes);
    for (const e of tr.effects) if (e.is(setErrorLines)) set = e.value;
    return set;
  },
  provide: (f) => lineNumberMarkers.from(f),
});

/** The 0-based document position of a 1-based line and column (columns count characters,
 *  as the Rust side does; CodeMirror counts UTF-16 units), clamped into the document. */
export function positionOf(doc, line, column) {
  const l = doc.line(Math.min(Math.max(1, line), doc.lines));
  let pos = l.from;
  let col = 1;
  for (const ch of l.text) {
    if (col >= column) break;
    pos += ch.length;
    col += 1;
  }
  return Math.min(pos, l.to);
}

/** The editor: `onChange(text)` after every edit, `onApply()` on Ctrl/Cmd-Enter,
 *  `onReleased(bool)` when Esc released the keyboard (Tab then moves the focus on). */
export class KubeloopEditor {
  constructor(parent, onChange, onApply, onReleased) {
    this.onChange = onChange;
    this.onApply = onApply;
    this.onReleased = onReleased;
    this.released = false;
    this.states = new Map();
    this.name = null;
    this.label = new Compartment();
    this.view = new EditorView({ parent, state: this.fresh('', '') });
    this.view.contentDOM.addEventListener('keydown', (ev) => this.key(ev), true);
    // Tests read the document through this (a long one is not all in the DOM).
    this.view.contentDOM.kubeloop = this;
    this.view.contentDOM.addEventListener('blur', () => this.release(false));
  }

  extensions(name) {
    const tab = (view) => (this.released ? false : indentMore(view));
    return [
      lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(),
      drawSelection(), indentOnInput(), bracketMatching(), highlightActiveLine(),
      highlightSelectionMatches(), search({ top: true }), lintGutter(),
      syntaxHighlighting(colors), yaml(), theme, errorLines,
      EditorState.tabSize.of(2),
      this.label.of(EditorView.contentAttributes.of({ 'aria-label': name, 'data-testid': 'editor-input' })),
      keymap.of([
        { key: 'Mod-Enter', run: () => { this.onApply(); return true; }, preventDefault: true },
        { key: 'Tab', run: tab, shift: (view) => (this.released ? false : indentLess(view)) },
        // Redo on every platform both ways (CodeMirror binds Ctrl-Shift-z on Linux only).
        { key: 'Mod-Shift-z', run: redo, preventDefault: true },
        ...searchKeymap, ...historyKeymap, ...defaultKeymap,
      ]),
      EditorView.updateListener.of((u) => {
        if (u.docChanged && !u.transactions.every((tr) => tr.annotation(EditorKeep))) {
          this.onChange(u.state.doc.toString());
        }
      }),
    ];
  }

  fresh(name, text) {
    return EditorState.create({ doc: text, extensions: this.extensions(name) });
  }

  key(ev) {
    if (ev.key === 'Escape') {
      this.release(true);
    } else if (this.released && !['Shift', 'Control', 'Alt', 'Meta', 'Tab'].includes(ev.key)) {
      this.release(false);
    } else if (this.released && ev.key === 'Tab') {
      // Tab leaves the editor (the keymap declines it); the next visit edits again.
      setTimeout(() => this.release(false), 0);
    }
  }

  release(on) {
    if (this.released !== on) {
      this.released = on;
      this.onReleased(on);
    }
  }

  /** Shows file `name` with `text`: its own undo history and selection come back when it
   *  was shown before; a text changed elsewhere (a reload, a share link) replaces the
   *  document without undoing into it. */
  open(name, text) {
    if (this.name !== null) this.states.set(this.name, this.view.state);
    this.name = name;
    let state = this.states.get(name);
    if (!state) {
      state = this.fresh(name, text);
    }
    this.view.setState(state);
    this.setText(text);
    this.view.contentDOM.dataset.file = name;
  }

  /** Replaces the shown document when it differs from `text` (no change event). */
  setText(text) {
    if (this.view.state.doc.toString() === text) return;
    this.view.dispatch({
      changes: { from: 0, to: this.view.state.doc.length, insert: text },
      annotations: EditorKeep.of(true),
    });
  }

  /** Where the cursor is: a 1-based line and column (columns count characters). */
  cursor() {
    const head = this.view.state.selection.main.head;
    const line = this.view.state.doc.lineAt(head);
    return { line: line.number, column: [...line.text.slice(0, head - line.from)].length + 1 };
  }

  /** Replaces the whole document as a user's paste does (reported, undoable). */
  paste(text) {
    this.view.dispatch({
      changes: { from: 0, to: this.view.state.doc.length, insert: text },
      userEvent: 'input.paste',
    });
  }

  /** The shown document. */
  text() {
    return this.view.state.doc.toString();
  }

  /** Marks `problems`, an array of {line, column, message} (1-based). */
  diagnose(problems) {
    const doc = this.view.state.doc;
    const diagnostics = problems.map((p) => {
      const from = positionOf(doc, p.line, p.column);
      const line = doc.lineAt(from);
      const word = /^[^\s:]+/.exec(doc.sliceString(from, line.to));
      const to = word ? from + word[0].length : Math.min(from + 1, line.to);
      return { from, to: Math.max(to, from), severity: 'error', message: p.message };
    });
    const starts = [...new Set(diagnostics.map((d) => doc.lineAt(d.from).from))].sort((a, b) => a - b);
    const lines = RangeSet.of(starts.map((from) => errorLine.range(from)));
    const tr = setDiagnostics(this.view.state, diagnostics);
    this.view.dispatch({ effects: [...[tr.effects].flat(), setErrorLines.of(lines)] });
  }

  /** [`diagnose`] with the problems as JSON (what the wasm hands over). */
  diagnoseJson(json) {
    this.diagnose(JSON.parse(json));
  }

  /** Puts the cursor at a 1-based line and column, scrolls there and focuses. */
  jump(line, column) {
    const pos = positionOf(this.view.state.doc, line, column);
    this.view.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
    this.view.focus();
  }

  /** A file was renamed: its history follows it. */
  rename(from, to) {
    const state = from === this.name ? this.view.state : this.states.get(from);
    this.states.delete(from);
    if (state) this.states.set(to, state);
    if (from === this.name) {
      this.name = to;
      this.view.contentDOM.dataset.file = to;
      this.view.dispatch({ effects: this.label.reconfigure(EditorView.contentAttributes.of({ 'aria-label': to, 'data-testid': 'editor-input' })) });
    }
  }

  /** A file was deleted: its history goes. */
  forget(name) {
    this.states.delete(name);
    if (name === this.name) this.name = null;
  }

  /** Forgets every file's history (a new scenario was loaded). */
  forgetAll() {
    this.states.clear();
    this.name = null;
  }

  focus() {
    this.view.focus();
  }

  destroy() {
    this.view.destroy();
  }
}

/** Marks a transaction the page made itself (not an edit to report). */
const EditorKeep = Annotation.define();
