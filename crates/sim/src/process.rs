//! Terminal processes: a command (kubectl, etcdctl) runs as an async task on a tiny
//! deterministic executor; its requests are messages, its awaits resume when the
//! responses arrive in virtual time.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::api::{ApiRequest, ApiResponse, ApiResult, ReqId, Status, WatchEvent};
use crate::etcd::{EtcdOp, EtcdRequest, EtcdResponse, EtcdResult, EtcdWatchBatch};
use crate::message::{Actor, Ctx, Payload};
use crate::time::Time;

/// What a finished command printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Exit code.
    pub exit_code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// The process's side of the world: its mailbox and its terminal.
#[derive(Debug, Default)]
pub struct Io {
    now: Time,
    outbox: Vec<(Time, Actor, Payload)>,
    responses: BTreeMap<ReqId, ApiResponse>,
    etcd_responses: BTreeMap<u64, EtcdResponse>,
    watch_events: VecDeque<WatchEvent>,
    etcd_watch: VecDeque<EtcdWatchBatch>,
    fired: BTreeSet<u64>,
    kubelet_responses: BTreeMap<u64, crate::node::kubelet_api::KubeletResponse>,
    next_id: u64,
    connection_lost: bool,
    /// Standard output so far.
    pub stdout: String,
    /// Standard error so far.
    pub stderr: String,
    /// Lines printed since the UI last looked (for live output such as `-w`).
    pub unread: String,
    /// Files the command wrote into the terminal's working directory (`kubectl cp POD:F F`).
    written: Vec<(String, String)>,
    /// An interactive shell the command opened (`kubectl run -ti … -- sh`), for the
    /// terminal to enter when the command ends.
    pub session: Option<crate::kubeconfig_state::ShellSession>,
}

/// A handle the command's code uses to talk to the cluster and the terminal.
#[derive(Clone, Debug)]
pub struct Sys {
    io: Rc<RefCell<Io>>,
    /// kubeconfig user.
    pub user: String,
    /// kubeconfig user's groups.
    pub groups: Vec<String>,
    /// `--as`.
    pub impersonate: Option<String>,
    /// The terminal's working directory (file name → content).
    pub files: Rc<BTreeMap<String, String>>,
}

impl Sys {
    /// The current virtual time.
    pub fn now(&self) -> Time {
        self.io.borrow().now
    }

    /// Asks the terminal to enter `s` when this command ends.
    pub fn open_session(&self, s: crate::kubeconfig_state::ShellSession) {
        self.io.borrow_mut().session = Some(s);
    }

    /// Prints to stdout.
    pub fn out(&self, s: &str) {
        let mut io = self.io.borrow_mut();
        io.stdout.push_str(s);
        io.unread.push_str(s);
    }

    /// Prints to stderr.
    pub fn err(&self, s: &str) {
        let mut io = self.io.borrow_mut();
        io.stderr.push_str(s);
        io.unread.push_str(s);
    }

    /// Writes a file into the terminal's working directory (the page's files); the
    /// terminal takes it when the command exits.
    pub fn write_file(&self, name: &str, content: &str) {
        let mut io = self.io.borrow_mut();
        io.written.push((name.to_string(), content.to_string()));
    }

    fn next_id(&self) -> u64 {
        let mut io = self.io.borrow_mut();
        io.next_id += 1;
        io.next_id
    }

    /// Sends an API request and waits for its response.
    pub async fn api(&self, mut req: ApiRequest) -> Result<ApiResult, Status> {
        let id = self.next_id();
        req.id = id;
        // An empty user means credentials the apiserver will not accept.
        req.user = (!self.user.is_empty()).then(|| self.user.clone());
        req.groups = self.groups.clone();
        req.impersonate = self.impersonate.clone();
        self.io
            .borrow_mut()
            .outbox
            .push((0, Actor::ApiServer, Payload::Api(Box::new(req))));
        let io = self.io.clone();
        let resp = poll_until(move || io.borrow_mut().responses.remove(&id)).await;
        resp.result
    }

    /// Starts a watch; events then come from [`Sys::next_event`].
    pub async fn watch(&self, req: ApiRequest) -> Result<ReqId, Status> {
        let id = self.io.borrow().next_id + 1;
        self.api(req).await.map(|_| id)
    }

    /// The next event of a watch, or None when the connection broke.
    pub async fn next_event(&self, watch_id: ReqId) -> Option<WatchEvent> {
        let io = self.io.clone();
        poll_until(move || {
            let mut io = io.borrow_mut();
            if let Some(i) = io.watch_events.iter().position(|e| e.watch_id == watch_id) {
                return Some(io.watch_events.remove(i));
            }
            io.connection_lost.then_some(None)
        })
        .await
    }

    /// The next event of a watch (None when the connection broke), or `Err(())` once
    /// `ms` of virtual time have passed without one.
    pub async fn next_event_within(
        &self,
        watch_id: ReqId,
        ms: Time,
    ) -> Result<Option<WatchEvent>, ()> {
        let timer = self.next_id();
        self.io
            .borrow_mut()
            .outbox
            .push((ms, Actor::Terminal(0), Payload::Timer(timer)));
        let io = self.io.clone();
        poll_until(move || {
            let mut io = io.borrow_mut();
            if let Some(i) = io.watch_events.iter().position(|e| e.watch_id == watch_id) {
                return Some(Ok(io.watch_events.remove(i)));
            }
            if io.connection_lost {
                return Some(Ok(None));
            }
            io.fired.remove(&timer).then_some(Err(()))
        })
        .await
    }

    /// Sends a request to etcd and waits for the response.
    pub async fn etcd(&self, op: EtcdOp) -> Result<EtcdResult, String> {
        let id = self.next_id();
        self.io
            .borrow_mut()
            .outbox
            .push((0, Actor::Etcd, Payload::Etcd(EtcdRequest { id, op })));
        let io = self.io.clone();
        let r = poll_until(move || io.borrow_mut().etcd_responses.remove(&id)).await;
        r.result
    }

    /// The next etcd watch batch.
    pub async fn next_etcd_batch(&self) -> EtcdWatchBatch {
        let io = self.io.clone();
        poll_until(move || io.borrow_mut().etcd_watch.pop_front()).await
    }

    /// Calls a node's kubelet API through the apiserver's proxy and waits for the answer:
    /// the reply, or the error text (`dial tcp 172.18.0.3:10250: connect: connection refused`).
    pub async fn kubelet(
        &self,
        node: &str,
        call: crate::node::kubelet_api::KubeletCall,
    ) -> Result<crate::node::kubelet_api::KubeletReply, String> {
        let id = self.next_id();
        let req = crate::node::kubelet_api::KubeletRequest {
            id,
            node: node.to_string(),
            client: None,
            user: self.user.clone(),
            call,
        };
        self.io
            .borrow_mut()
            .outbox
            .push((0, Actor::ApiServer, Payload::KubeletApi(req)));
        let io = self.io.clone();
        let r = poll_until(move || io.borrow_mut().kubelet_responses.remove(&id)).await;
        r.result
    }

    /// Sleeps for `ms` of virtual time.
    pub async fn sleep(&self, ms: Time) {
        let id = self.next_id();
        self.io
            .borrow_mut()
            .outbox
            .push((ms, Actor::Terminal(0), Payload::Timer(id)));
        let io = self.io.clone();
        poll_until(move || io.borrow_mut().fired.remove(&id).then_some(())).await;
    }
}

/// A future that is ready when `f` returns Some.
fn poll_until<T, F: FnMut() -> Option<T>>(mut f: F) -> impl Future<Output = T> {
    std::future::poll_fn(move |_cx: &mut Context<'_>| match f() {
        Some(v) => Poll::Ready(v),
        None => Poll::Pending,
    })
}

/// A running (or finished) terminal command.
pub struct Process {
    /// The command line.
    pub line: String,
    io: Rc<RefCell<Io>>,
    task: Option<Pin<Box<dyn Future<Output = i32>>>>,
    exit_code: Option<i32>,
    /// When it started.
    pub started: Time,
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process")
            .field("line", &self.line)
            .field("exit_code", &self.exit_code)
            .finish()
    }
}

impl Process {
    /// A process running `task`, built from a [`Sys`] made by [`Process::sys`].
    pub fn new(
        line: &str,
        io: Rc<RefCell<Io>>,
        task: Pin<Box<dyn Future<Output = i32>>>,
        now: Time,
    ) -> Process {
        io.borrow_mut().now = now;
        Process {
            line: line.to_string(),
            io,
            task: Some(task),
            exit_code: None,
            started: now,
        }
    }

    /// A fresh I/O block and the handle a command uses.
    pub fn sys(
        user: &str,
        groups: &[&str],
        impersonate: Option<String>,
        files: Rc<BTreeMap<String, String>>,
    ) -> (Rc<RefCell<Io>>, Sys) {
        let io = Rc::new(RefCell::new(Io::default()));
        let sys = Sys {
            io: io.clone(),
            user: user.to_string(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            impersonate,
            files,
        };
        (io, sys)
    }

    /// A process that already finished with this output (parse errors and the like).
    pub fn finished(line: &str, out: Output) -> Process {
        let io = Io {
            stdout: out.stdout.clone(),
            stderr: out.stderr.clone(),
            unread: format!("{}{}", out.stdout, out.stderr),
            ..Io::default()
        };
        Process {
            line: line.to_string(),
            io: Rc::new(RefCell::new(io)),
            task: None,
            exit_code: Some(out.exit_code),
            started: 0,
        }
    }

    /// Whether the command has exited.
    pub fn is_finished(&self) -> bool {
        self.exit_code.is_some()
    }

    /// The output once finished.
    pub fn output(&self) -> Option<Output> {
        let io = self.io.borrow();
        self.exit_code.map(|c| Output {
            exit_code: c,
            stdout: io.stdout.clone(),
            stderr: io.stderr.clone(),
        })
    }

    /// The files the command wrote, in order, since the last call.
    pub fn take_written(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.io.borrow_mut().written)
    }

    /// The interactive shell the command opened, once (see [`Io::session`]).
    pub fn take_session(&mut self) -> Option<crate::kubeconfig_state::ShellSession> {
        self.io.borrow_mut().session.take()
    }

    /// What was printed since the last call (for live terminals).
    pub fn take_unread(&mut self) -> String {
        std::mem::take(&mut self.io.borrow_mut().unread)
    }

    /// Interrupts the command (Ctrl-C): it exits with 130.
    pub fn interrupt(&mut self) {
        if self.exit_code.is_none() {
            self.task = None;
            self.exit_code = Some(130);
        }
    }

    /// Delivers a message to the process and lets it run.
    pub fn handle(&mut self, ctx: &mut Ctx, _from: Actor, payload: Payload) {
        {
            let mut io = self.io.borrow_mut();
            match payload {
                Payload::ApiResp(r) => {
                    io.responses.insert(r.id, r);
                }
                Payload::Watch(w) => io.watch_events.push_back(w),
                Payload::EtcdResp(r) => {
                    io.etcd_responses.insert(r.id, r);
                }
                Payload::EtcdWatch(b) => io.etcd_watch.push_back(b),
                Payload::Timer(t) => {
                    io.fired.insert(t);
                }
                Payload::ConnectionLost => io.connection_lost = true,
                Payload::KubeletApiResp(r) => {
                    io.kubelet_responses.insert(r.id, r);
                }
                _ => {}
            }
        }
        self.poll(ctx);
    }

    /// Runs the task until it waits; sends what it queued.
    pub fn poll(&mut self, ctx: &mut Ctx) {
        self.io.borrow_mut().now = ctx.now;
        if let Some(task) = self.task.as_mut() {
            let mut cx = Context::from_waker(Waker::noop());
            if let Poll::Ready(code) = task.as_mut().poll(&mut cx) {
                self.exit_code = Some(code);
                self.task = None;
            }
        }
        let out = std::mem::take(&mut self.io.borrow_mut().outbox);
        for (delay, to, payload) in out {
            match payload {
                Payload::Timer(t) => ctx.timer(delay, t),
                p => ctx.send_after(delay, to, p),
            }
        }
    }
}
