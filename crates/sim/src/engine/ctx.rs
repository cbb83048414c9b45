//! What an actor can do while handling a message: read the clock, send, set timers.

use super::actor::Actor;
use crate::time::Time;

/// A message body the engine can carry: it only needs to know how to make a timer.
pub trait Message {
    /// The body of a timer an actor sets for itself; the token means what the actor says.
    fn timer(token: u64) -> Self;
}

/// An outgoing message recorded by an actor during one handler call.
#[derive(Debug)]
pub struct Outgoing<P> {
    /// Extra delay on top of the network latency.
    pub delay: Time,
    /// Receiver.
    pub to: Actor,
    /// Body.
    pub payload: P,
}

/// What an actor can do while handling a message.
pub struct Ctx<'a, P> {
    /// Current virtual time.
    pub now: Time,
    /// The actor being run.
    pub me: Actor,
    out: &'a mut Vec<Outgoing<P>>,
}

impl<'a, P: Message> Ctx<'a, P> {
    /// A context writing into `out` (tests use this to drive one component by hand).
    pub fn new(now: Time, me: Actor, out: &'a mut Vec<Outgoing<P>>) -> Ctx<'a, P> {
        Ctx { now, me, out }
    }

    /// Sends a message; it arrives after the network latency.
    pub fn send(&mut self, to: Actor, payload: P) {
        self.send_after(0, to, payload);
    }

    /// Sends a message that leaves after `delay` (processing time), then travels.
    pub fn send_after(&mut self, delay: Time, to: Actor, payload: P) {
        self.out.push(Outgoing { delay, to, payload });
    }

    /// Sets a timer: [`Message::timer`]`(token)` to self after `delay`.
    pub fn timer(&mut self, delay: Time, token: u64) {
        let me = self.me;
        self.send_after(delay, me, P::timer(token));
    }
}
