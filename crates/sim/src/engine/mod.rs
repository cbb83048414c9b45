//! The engine's core: who talks ([`Actor`]), what a handler may do ([`Ctx`]), and the
//! ordered queue of messages in flight ([`EventQueue`]). It is generic over the message
//! body, so it depends on nothing of the cluster above it: every component imports it,
//! it imports none of them.

mod actor;
mod ctx;
mod queue;

pub use actor::Actor;
pub use ctx::{Ctx, Message, Outgoing};
pub use queue::{Envelope, EventQueue};
