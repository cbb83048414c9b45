//! The ordered queue of messages in flight: by arrival time, then by the order they
//! were sent, so one seed always gives one order.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::actor::Actor;
use crate::time::Time;

/// A message in flight.
#[derive(Debug)]
pub struct Envelope<P> {
    /// When it was sent.
    pub sent: Time,
    /// When it arrives.
    pub at: Time,
    /// Sender.
    pub from: Actor,
    /// Receiver.
    pub to: Actor,
    /// Body.
    pub payload: P,
    /// Generated at the receiver's own end (a failed connection noticed locally): it
    /// needs no working link.
    pub local: bool,
}

/// Messages in flight, each numbered in the order it was sent.
#[derive(Debug)]
pub struct EventQueue<P> {
    seq: u64,
    heap: BinaryHeap<Reverse<(Time, u64)>>,
    /// The messages by sequence number, boxed: the map moves entries as it rebalances.
    pending: BTreeMap<u64, Box<Envelope<P>>>,
}

impl<P> Default for EventQueue<P> {
    fn default() -> Self {
        EventQueue {
            seq: 0,
            heap: BinaryHeap::new(),
            pending: BTreeMap::new(),
        }
    }
}

impl<P> EventQueue<P> {
    /// Queues a message; returns its sequence number.
    pub fn push(&mut self, env: Envelope<P>) -> u64 {
        let seq = self.take_seq();
        self.heap.push(Reverse((env.at, seq)));
        self.pending.insert(seq, Box::new(env));
        seq
    }

    /// Uses up a sequence number without queueing anything (ids for injected requests).
    pub fn take_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The next message, by arrival time then sending order.
    pub fn pop(&mut self) -> Option<Envelope<P>> {
        loop {
            let Reverse((_, seq)) = self.heap.pop()?;
            if let Some(env) = self.pending.remove(&seq) {
                return Some(*env);
            }
        }
    }

    /// The arrival time of the next message, if any.
    pub fn next_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// The sequence number the next message sent will get.
    pub fn next_seq(&self) -> u64 {
        self.seq + 1
    }

    /// Messages in flight, in arrival order.
    pub fn in_flight(&self) -> impl Iterator<Item = &Envelope<P>> {
        let mut keys: Vec<&Reverse<(Time, u64)>> = self.heap.iter().collect();
        keys.sort();
        keys.reverse();
        keys.into_iter()
            .filter_map(|Reverse((_, s))| self.pending.get(s).map(|e| &**e))
    }

    /// Messages in flight whose sequence number is at least `seq`, oldest first.
    pub fn in_flight_since(&self, seq: u64) -> impl Iterator<Item = (u64, &Envelope<P>)> {
        self.pending.range(seq..).map(|(s, e)| (*s, &**e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(at: Time, to: Actor) -> Envelope<u32> {
        Envelope {
            sent: 0,
            at,
            from: Actor::Etcd,
            to,
            payload: 0,
            local: false,
        }
    }

    #[test]
    fn delivers_by_time_then_sending_order() {
        let mut q = EventQueue::default();
        q.push(env(5, Actor::Scheduler));
        q.push(env(3, Actor::ApiServer));
        q.push(env(5, Actor::ControllerManager));
        let order: Vec<Actor> = std::iter::from_fn(|| q.pop()).map(|e| e.to).collect();
        assert_eq!(
            order,
            [Actor::ApiServer, Actor::Scheduler, Actor::ControllerManager]
        );
    }

    #[test]
    fn in_flight_since_sees_only_newer_messages() {
        let mut q = EventQueue::default();
        q.push(env(1, Actor::Etcd));
        let mark = q.next_seq();
        q.push(env(2, Actor::ApiServer));
        let newer: Vec<Actor> = q.in_flight_since(mark).map(|(_, e)| e.to).collect();
        assert_eq!(newer, [Actor::ApiServer]);
    }
}
