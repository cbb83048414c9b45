//! Requests, responses, watch events and `Status` errors exchanged with kube-apiserver.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::object::{Kind, Object};
use crate::selector::{FieldSelector, LabelSelector};

/// A request id, unique per sending actor.
pub type ReqId = u64;

/// The API verbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verb {
    /// Read one object.
    Get,
    /// Read a collection.
    List,
    /// Stream changes.
    Watch,
    /// Create an object (POST).
    Create,
    /// Replace an object (PUT).
    Update,
    /// Patch an object.
    Patch,
    /// Delete an object.
    Delete,
}

impl Verb {
    /// The RBAC verb name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }

    /// The HTTP method the verb travels as.
    pub fn http_method(self) -> &'static str {
        match self {
            Verb::Get | Verb::List | Verb::Watch => "GET",
            Verb::Create => "POST",
            Verb::Update => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        }
    }

    /// Whether the verb writes.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Verb::Create | Verb::Update | Verb::Patch | Verb::Delete
        )
    }
}

/// Subresources served by the apiserver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subresource {
    /// `/status`
    Status,
    /// `/scale`
    Scale,
    /// `/binding` (pods)
    Binding,
    /// `/eviction` (pods)
    Eviction,
    /// `/finalize` (namespaces: the namespace controller removes spec.finalizers)
    Finalize,
}

impl Subresource {
    /// The URL segment.
    pub fn as_str(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Scale => "scale",
            Subresource::Binding => "binding",
            Subresource::Eviction => "eviction",
            Subresource::Finalize => "finalize",
        }
    }
}

/// Patch encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
}

/// Deletion propagation policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Owner deleted now; the garbage collector deletes dependents afterwards.
    Background,
    /// Dependents deleted first, then the owner.
    Foreground,
    /// Dependents keep running, their ownerReferences removed.
    Orphan,
}

/// A request body.
#[derive(Clone, Debug, Default)]
pub enum Body {
    /// No body.
    #[default]
    None,
    /// A typed object (from in-cluster clients).
    Object(Object),
    /// A raw JSON document (from kubectl); decoded strictly by the apiserver.
    Raw(serde_json::Value),
    /// A patch document.
    Patch(PatchType, serde_json::Value),
    /// A Binding to a node (pods/binding), with annotations to copy onto the pod.
    Binding {
        /// Target node.
        node: String,
        /// Annotations the binding carries.
        annotations: BTreeMap<String, String>,
    },
    /// A scale subresource update: the new replica count.
    Scale(i32),
}

/// Options of a request (query parameters).
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// `labelSelector`.
    pub label_selector: Option<LabelSelector>,
    /// `fieldSelector`.
    pub field_selector: Option<FieldSelector>,
    /// `resourceVersion` (lists/watches: start point; updates: precondition).
    pub resource_version: Option<u64>,
    /// `propagationPolicy` for deletes.
    pub propagation: Option<Propagation>,
    /// `gracePeriodSeconds` for deletes.
    pub grace_period_seconds: Option<i64>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// `fieldValidation=Ignore` (`kubectl --validate=false`): the custom resource handler
    /// prunes unknown fields silently instead of refusing them.
    pub ignore_unknown_fields: bool,
}

/// A request to kube-apiserver.
#[derive(Clone, Debug)]
pub struct ApiRequest {
    /// Id, unique per sender; the response carries it back.
    pub id: ReqId,
    /// Authenticated identity (from the client certificate / token); None = anonymous.
    pub user: Option<String>,
    /// Groups of the identity.
    pub groups: Vec<String>,
    /// `Impersonate-User` header (`kubectl --as`).
    pub impersonate: Option<String>,
    /// Verb.
    pub verb: Verb,
    /// Resource kind.
    pub kind: Kind,
    /// Namespace ("" = all namespaces for list/watch, or cluster-scoped).
    pub namespace: String,
    /// Object name ("" for collections and generateName creates).
    pub name: String,
    /// Subresource.
    pub subresource: Option<Subresource>,
    /// Body.
    pub body: Body,
    /// Query options.
    pub options: RequestOptions,
}

impl ApiRequest {
    /// A request with empty options.
    pub fn new(verb: Verb, kind: Kind, namespace: &str, name: &str) -> ApiRequest {
        ApiRequest {
            id: 0,
            user: None,
            groups: Vec::new(),
            impersonate: None,
            verb,
            kind,
            namespace: namespace.to_string(),
            name: name.to_string(),
            subresource: None,
            body: Body::None,
            options: RequestOptions::default(),
        }
    }

    /// Sets the body.
    pub fn with_body(mut self, body: Body) -> ApiRequest {
        self.body = body;
        self
    }

    /// Sets the subresource.
    pub fn with_subresource(mut self, s: Subresource) -> ApiRequest {
        self.subresource = Some(s);
        self
    }

    /// The request path, as it would travel over HTTP (for traces and the UI).
    pub fn path(&self) -> String {
        let info = self.kind.info();
        let mut p = if info.group.is_empty() {
            "/api/v1".to_string()
        } else {
            format!("/apis/{}/{}", info.group, info.version)
        };
        if info.namespaced && !self.namespace.is_empty() {
            p.push_str("/namespaces/");
            p.push_str(&self.namespace);
        }
        p.push('/');
        p.push_str(info.plural);
        if !self.name.is_empty() {
            p.push('/');
            p.push_str(&self.name);
        }
        if let Some(s) = self.subresource {
            p.push('/');
            p.push_str(s.as_str());
        }
        if self.verb == Verb::Watch {
            p.push_str("?watch=true");
        }
        p
    }
}

/// A successful response body.
#[derive(Clone, Debug)]
pub enum ApiResult {
    /// One object.
    Object(Arc<Object>),
    /// A collection at a resourceVersion.
    List {
        /// Items, sorted by namespace then name.
        items: Vec<Arc<Object>>,
        /// The list's resourceVersion.
        resource_version: u64,
    },
    /// A watch has started; events follow as [`WatchEvent`]s with the request's id.
    WatchStarted,
    /// A success Status (e.g. a delete that completed immediately).
    Success(Arc<Object>),
}

/// A response from kube-apiserver (or from the network, when it could not be reached).
#[derive(Clone, Debug)]
pub struct ApiResponse {
    /// The request's id.
    pub id: ReqId,
    /// The result.
    pub result: Result<ApiResult, Status>,
}

/// Watch event types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEventType {
    /// ADDED
    Added,
    /// MODIFIED
    Modified,
    /// DELETED
    Deleted,
    /// BOOKMARK
    Bookmark,
}

impl WatchEventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            WatchEventType::Added => "ADDED",
            WatchEventType::Modified => "MODIFIED",
            WatchEventType::Deleted => "DELETED",
            WatchEventType::Bookmark => "BOOKMARK",
        }
    }
}

/// One event on a watch stream.
#[derive(Clone, Debug)]
pub struct WatchEvent {
    /// The id of the watch request.
    pub watch_id: ReqId,
    /// What happened, or an error that ends the watch (e.g. 410 Gone).
    pub event: Result<(WatchEventType, Arc<Object>), Status>,
}

/// `metav1.StatusReason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusReason {
    /// No reason (kubectl prints `Error from server: <message>`).
    Unknown,
    /// 401
    Unauthorized,
    /// 403
    Forbidden,
    /// 404
    NotFound,
    /// 409 on create
    AlreadyExists,
    /// 409 on a stale update
    Conflict,
    /// 410 (watch from a compacted revision)
    Gone,
    /// 422
    Invalid,
    /// 504
    Timeout,
    /// 400
    BadRequest,
    /// 405
    MethodNotAllowed,
    /// 500
    InternalError,
    /// 503
    ServiceUnavailable,
    /// 429
    TooManyRequests,
}

impl StatusReason {
    /// The reason string.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusReason::Unknown => "",
            StatusReason::Unauthorized => "Unauthorized",
            StatusReason::Forbidden => "Forbidden",
            StatusReason::NotFound => "NotFound",
            StatusReason::AlreadyExists => "AlreadyExists",
            StatusReason::Conflict => "Conflict",
            StatusReason::Gone => "Expired",
            StatusReason::Invalid => "Invalid",
            StatusReason::Timeout => "Timeout",
            StatusReason::BadRequest => "BadRequest",
            StatusReason::MethodNotAllowed => "MethodNotAllowed",
            StatusReason::InternalError => "InternalError",
            StatusReason::ServiceUnavailable => "ServiceUnavailable",
            StatusReason::TooManyRequests => "TooManyRequests",
        }
    }
}

/// Where a failure happened when the server never answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// The server answered (a real `Status`).
    Server,
    /// TCP connection refused: the process is down.
    Refused,
    /// No answer in time: the network is cut.
    TimedOut,
    /// An established connection broke.
    Reset,
}

/// A `metav1.Status` failure, or a transport failure dressed as one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// HTTP code (0 for transport failures).
    pub code: u16,
    /// Reason.
    pub reason: StatusReason,
    /// Message.
    pub message: String,
    /// Whether this came from the server or the network.
    pub transport: Transport,
    /// Field-level causes of an Invalid status (`spec.replicas: Invalid value: …`).
    pub causes: Vec<String>,
    /// `details.kind` (for kubectl's `The <Kind> "<name>" is invalid` line).
    pub details_kind: String,
    /// `details.name`.
    pub details_name: String,
    /// Details beyond field causes (a refused eviction's), boxed to keep errors small.
    pub extra: Option<Box<StatusExtra>>,
}

/// `details.causes` with a type, and `details.retryAfterSeconds`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusExtra {
    /// Typed causes as (type, message): `DisruptionBudget` on a refused eviction.
    pub typed_causes: Vec<(String, String)>,
    /// `details.retryAfterSeconds` (0 when absent).
    pub retry_after_seconds: u32,
}

impl Status {
    /// A server Status.
    pub fn new(code: u16, reason: StatusReason, message: impl Into<String>) -> Status {
        Status {
            code,
            reason,
            message: message.into(),
            transport: Transport::Server,
            causes: Vec::new(),
            details_kind: String::new(),
            details_name: String::new(),
            extra: None,
        }
    }

    /// 404 `<resource> "<name>" not found`.
    pub fn not_found(kind: Kind, name: &str) -> Status {
        Status::new(
            404,
            StatusReason::NotFound,
            format!("{} \"{}\" not found", kind.info().group_resource(), name),
        )
    }

    /// 409 `<resource> "<name>" already exists`.
    pub fn already_exists(kind: Kind, name: &str) -> Status {
        Status::new(
            409,
            StatusReason::AlreadyExists,
            format!(
                "{} \"{}\" already exists",
                kind.info().group_resource(),
                name
            ),
        )
    }

    /// 409 optimistic-concurrency conflict.
    pub fn conflict(kind: Kind, name: &str) -> Status {
        Status::new(
            409,
            StatusReason::Conflict,
            format!(
                "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                kind.info().group_resource(),
                name
            ),
        )
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::new(400, StatusReason::BadRequest, message)
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Status {
        Status::new(500, StatusReason::InternalError, message)
    }

    /// A transport failure.
    pub fn transport(t: Transport, message: impl Into<String>) -> Status {
        Status {
            transport: t,
            code: 0,
            ..Status::new(0, StatusReason::Unknown, message)
        }
    }

    /// Whether this is a 404.
    pub fn is_not_found(&self) -> bool {
        self.reason == StatusReason::NotFound
    }

    /// Whether this is a 429 TooManyRequests.
    pub fn is_too_many_requests(&self) -> bool {
        self.reason == StatusReason::TooManyRequests
    }

    /// Whether this is a 409 Conflict.
    pub fn is_conflict(&self) -> bool {
        self.reason == StatusReason::Conflict
    }

    /// Whether this is a 409 AlreadyExists.
    pub fn is_already_exists(&self) -> bool {
        self.reason == StatusReason::AlreadyExists
    }

    /// How kubectl prints this error (without the trailing newline).
    pub fn kubectl_message(&self, server: &str) -> String {
        match self.transport {
            Transport::Refused => format!(
                "The connection to the server {server} was refused - did you specify the right host or port?"
            ),
            Transport::TimedOut => format!("Unable to connect to the server: dial tcp {server}: i/o timeout"),
            Transport::Reset => format!("Unable to connect to the server: read tcp {server}: connection reset by peer"),
            Transport::Server => match self.reason {
                StatusReason::Unauthorized => "error: You must be logged in to the server (Unauthorized)".to_string(),
                StatusReason::Invalid if !self.causes.is_empty() => {
                    if self.causes.len() == 1 {
                        format!("The {} \"{}\" is invalid: {}", self.details_kind, self.details_name, self.causes[0])
                    } else {
                        let list: Vec<String> = self.causes.iter().map(|c| format!("* {c}")).collect();
                        format!("The {} \"{}\" is invalid: \n{}", self.details_kind, self.details_name, list.join("\n"))
                    }
                }
                StatusReason::Unknown => format!("Error from server: {}", self.message),
                r => format!("Error from server ({}): {}", r.as_str(), self.message),
            },
        }
    }
}
