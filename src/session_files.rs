//! The scenario's files as the editor's tabs: add, rename, delete (and undo a delete).
//! Names are what `kubectl apply -f NAME` reads, so they must be file names: not empty,
//! no `/`, not `.` or `..`, no control characters, at most 255 bytes, and not taken.

use crate::i18n::{t, Key, Lang};

use super::Session;

/// Why a file operation was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// The name is empty (or only spaces).
    Empty,
    /// The name has a `/`: files here have no folders.
    Slash,
    /// `.` or `..`.
    Dots,
    /// A control character (a newline, a tab, NUL…).
    Control,
    /// Longer than 255 bytes (a file name's limit on Linux, NAME_MAX).
    TooLong,
    /// Another file has this name.
    Exists(String),
    /// No file has this name.
    Missing(String),
    /// The last file: the editor always has one open.
    Last,
}

impl FileError {
    /// What to tell the learner, in `lang`.
    pub fn message(&self, lang: Lang) -> String {
        let (key, name) = match self {
            FileError::Empty => (Key::FileNameEmpty, None),
            FileError::Slash => (Key::FileNameSlash, None),
            FileError::Dots => (Key::FileNameDots, None),
            FileError::Control => (Key::FileNameControl, None),
            FileError::TooLong => (Key::FileNameTooLong, None),
            FileError::Exists(n) => (Key::FileNameExists, Some(n)),
            FileError::Missing(n) => (Key::FileMissing, Some(n)),
            FileError::Last => (Key::FileLast, None),
        };
        match name {
            Some(n) => format!("{} {n}", t(lang, key)),
            None => t(lang, key).to_string(),
        }
    }
}

/// A deleted file, kept so the delete can be undone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeletedFile {
    /// Its name.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// Checks that `name` can name a file (not whether it is taken).
pub fn check_file_name(name: &str) -> Result<(), FileError> {
    if name.trim().is_empty() {
        Err(FileError::Empty)
    } else if name.contains('/') {
        Err(FileError::Slash)
    } else if name == "." || name == ".." {
        Err(FileError::Dots)
    } else if name.chars().any(char::is_control) {
        Err(FileError::Control)
    } else if name.len() > 255 {
        Err(FileError::TooLong)
    } else {
        Ok(())
    }
}

impl Session {
    fn free_name(&self, name: &str) -> Result<(), FileError> {
        check_file_name(name)?;
        if self.scenario.spec.files.contains_key(name) {
            return Err(FileError::Exists(name.to_string()));
        }
        Ok(())
    }

    fn files_changed(&mut self) {
        self.files_logged = false;
        self.scenario_revision += 1;
        self.revision += 1;
    }

    /// A new file `name` with `text` (the `+` tab: empty).
    pub fn add_file(&mut self, name: &str, text: &str) -> Result<(), FileError> {
        self.free_name(name)?;
        if let Some(live) = self.live.as_mut() {
            live.add_file(name, text)?;
        }
        self.scenario
            .spec
            .files
            .insert(name.to_string(), text.to_string());
        self.files_changed();
        Ok(())
    }

    /// Renames file `from` to `to`; the errors marked in it follow it.
    pub fn rename_file(&mut self, from: &str, to: &str) -> Result<(), FileError> {
        if from == to {
            return check_file_name(to);
        }
        if !self.scenario.spec.files.contains_key(from) {
            return Err(FileError::Missing(from.to_string()));
        }
        self.free_name(to)?;
        if let Some(live) = self.live.as_mut() {
            live.rename_file(from, to)?;
        }
        if let Some(text) = self.scenario.spec.files.remove(from) {
            self.scenario.spec.files.insert(to.to_string(), text);
        }
        if let Some(errors) = self.apply_errors.remove(from) {
            self.apply_errors.insert(to.to_string(), errors);
        }
        self.files_changed();
        Ok(())
    }

    /// Deletes file `name` (not the last one); what it held comes back with
    /// [`Session::restore_file`].
    pub fn delete_file(&mut self, name: &str) -> Result<DeletedFile, FileError> {
        if !self.scenario.spec.files.contains_key(name) {
            return Err(FileError::Missing(name.to_string()));
        }
        if self.scenario.spec.files.len() == 1 {
            return Err(FileError::Last);
        }
        if let Some(live) = self.live.as_mut() {
            live.delete_file(name)?;
        }
        let text = self.scenario.spec.files.remove(name).unwrap_or_default();
        self.apply_errors.remove(name);
        self.files_changed();
        Ok(DeletedFile {
            name: name.to_string(),
            text,
        })
    }

    /// Undoes a delete: the file comes back under its name (refused if that is taken now).
    pub fn restore_file(&mut self, file: &DeletedFile) -> Result<(), FileError> {
        self.add_file(&file.name, &file.text)
    }
}
