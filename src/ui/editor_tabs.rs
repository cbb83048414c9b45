//! The file tabs above the editor: select a file, `+` adds one (asking its name),
//! double-click or ✎ renames, × deletes after a confirm, with an Undo afterwards.
//! The Session checks the names ([`crate::session::check_file_name`]).

use leptos::html;
use leptos::prelude::*;

use super::use_ui;
use crate::i18n::Key;
use crate::session::DeletedFile;

/// What the name field is for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Naming {
    New,
    Rename(String),
}

/// The tab strip. `on_renamed(from, to)` and `on_deleted(name)` tell the editor, so a
/// file's undo history follows it or goes.
#[component]
pub fn FileTabs(
    on_renamed: impl Fn(String, String) + Copy + Send + Sync + 'static,
    on_deleted: impl Fn(String) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let ui = use_ui();
    let names = Memo::new(move |_| {
        ui.files_rev.track();
        ui.scenario_rev.track();
        ui.session
            .try_with_value(|s| s.file_names())
            .unwrap_or_default()
    });
    let naming = RwSignal::new(None::<Naming>);
    let draft = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let confirm = RwSignal::new(None::<String>);
    let deleted = RwSignal::new(None::<DeletedFile>);
    let field: NodeRef<html::Input> = NodeRef::new();
    // The name field takes the focus, its text selected, as it opens.
    Effect::new(move |_| {
        if naming.get().is_some() {
            request_animation_frame(move || {
                if let Some(f) = field.try_get_untracked().flatten() {
                    let _ = f.focus();
                    f.select();
                }
            });
        }
    });
    let start = move |n: Naming| {
        draft.set(match &n {
            Naming::New => String::new(),
            Naming::Rename(from) => from.clone(),
        });
        error.set(None);
        confirm.set(None);
        naming.set(Some(n));
    };
    let commit = move || {
        let Some(n) = naming.get_untracked() else {
            return;
        };
        let name = draft.get_untracked();
        let lang = ui.lang.get_untracked();
        let result = ui.update(|s| match &n {
            Naming::New => s.add_file(&name, ""),
            Naming::Rename(from) => s.rename_file(from, &name),
        });
        match result {
            Some(Ok(())) => {
                naming.set(None);
                error.set(None);
                deleted.set(None);
                if let Naming::Rename(from) = &n {
                    on_renamed(from.clone(), name.clone());
                }
                ui.file.set(name);
            }
            Some(Err(e)) => error.set(Some(e.message(lang))),
            None => {}
        }
    };
    let cancel = move || {
        naming.set(None);
        error.set(None);
    };
    let delete = move |name: String| {
        let lang = ui.lang.get_untracked();
        let list = names.get_untracked();
        let at = list.iter().position(|n| *n == name).unwrap_or(0);
        match ui.update(|s| s.delete_file(&name)) {
            Some(Ok(gone)) => {
                confirm.set(None);
                error.set(None);
                on_deleted(name.clone());
                deleted.set(Some(gone));
                let rest: Vec<&String> = list.iter().filter(|n| **n != name).collect();
                if let Some(next) = rest.get(at.min(rest.len().saturating_sub(1))) {
                    ui.file.set((*next).clone());
                }
            }
            Some(Err(e)) => {
                confirm.set(None);
                error.set(Some(e.message(lang)));
            }
            None => {}
        }
    };
    let undo = move || {
        let Some(gone) = deleted.get_untracked() else {
            return;
        };
        let lang = ui.lang.get_untracked();
        match ui.update(|s| s.restore_file(&gone)) {
            Some(Ok(())) => {
                deleted.set(None);
                error.set(None);
                ui.file.set(gone.name);
            }
            Some(Err(e)) => error.set(Some(e.message(lang))),
            None => {}
        }
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| match ev.key().as_str() {
        "Enter" => {
            ev.prevent_default();
            commit();
        }
        "Escape" => {
            ev.prevent_default();
            cancel();
        }
        _ => {}
    };
    let name_field = move || {
        view! {
            <input class="tab-name" data-testid="file-name-input" node_ref=field type="text"
                spellcheck="false" autocomplete="off"
                aria-label=move || ui.t(Key::FileNameLabel) title=move || ui.t(Key::FileNameLabel)
                aria-invalid=move || error.get().is_some().to_string()
                prop:value=move || draft.get()
                on:input=move |ev| { draft.set(event_target_value(&ev)); error.set(None); }
                on:keydown=on_key/>
        }
    };
    let tab = move |name: String| {
        let active = {
            let n = name.clone();
            move || ui.file.get() == n
        };
        let (n_click, n_dbl) = (name.clone(), name.clone());
        let actions = {
            let name = name.clone();
            move || {
                let (r, d) = (name.clone(), name.clone());
                view! {
                    <button class="tab-act" data-testid="file-rename"
                        title=move || ui.t(Key::FileRename) aria-label=move || ui.t(Key::FileRename)
                        on:click=move |_| start(Naming::Rename(r.clone()))>"✎"</button>
                    <button class="tab-act" data-testid="file-delete"
                        title=move || ui.t(Key::FileDelete) aria-label=move || ui.t(Key::FileDelete)
                        on:click=move |_| { naming.set(None); error.set(None); confirm.set(Some(d.clone())); }>"×"</button>
                }
            }
        };
        let a2 = active.clone();
        let a3 = active.clone();
        let a4 = active.clone();
        view! {
            <span class="tab-wrap" class:active=active>
                <button class="tab" role="tab" data-testid="file-tab"
                    class:active=a2
                    aria-selected=move || a3().to_string()
                    title=move || ui.t(Key::FileRenameHint)
                    on:click=move |_| ui.file.set(n_click.clone())
                    on:dblclick=move |_| start(Naming::Rename(n_dbl.clone()))>{name}</button>
                {move || a4().then(actions.clone())}
            </span>
        }
    };
    view! {
        <div class="tabs" role="tablist" aria-label=move || ui.t(Key::Files)>
            <For each=move || names.get() key=|n| n.clone() let:name>
                {move || {
                    if naming.get() == Some(Naming::Rename(name.clone())) {
                        name_field().into_any()
                    } else {
                        tab(name.clone()).into_any()
                    }
                }}
            </For>
            {move || (naming.get() == Some(Naming::New)).then(name_field)}
            <button class="tab tab-add" data-testid="file-add"
                title=move || ui.t(Key::FileAdd) aria-label=move || ui.t(Key::FileAdd)
                on:click=move |_| start(Naming::New)>"+"</button>
        </div>
        {move || error.get().map(|e| view! { <div class="file-note bad" role="alert" data-testid="file-error">{e}</div> })}
        {move || confirm.get().map(|name| {
            let n = name.clone();
            view! {
                <div class="file-note" role="alertdialog" data-testid="file-confirm">
                    <span>{move || ui.t(Key::FileDeleteAsk)}" "<b class="mono">{name.clone()}</b></span>
                    <button class="btn danger" data-testid="file-delete-confirm" on:click=move |_| delete(n.clone())>{move || ui.t(Key::FileDelete)}</button>
                    <button class="btn ghost" data-testid="file-delete-cancel" on:click=move |_| confirm.set(None)>{move || ui.t(Key::Cancel)}</button>
                </div>
            }
        })}
        {move || deleted.get().map(|gone| view! {
            <div class="file-note" role="status" data-testid="file-deleted">
                <span>{move || ui.t(Key::FileDeleted)}" "<b class="mono">{gone.name.clone()}</b></span>
                <button class="btn ghost" data-testid="file-undo" on:click=move |_| undo()>{move || ui.t(Key::Undo)}</button>
            </div>
        })}
    }
}
