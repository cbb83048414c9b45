//! Typed timers: an actor names what a timer means with its own type, and the registry
//! hands out the world's `u64` tokens, so no actor keeps number ranges by hand.

use std::collections::BTreeMap;

use crate::message::Ctx;
use crate::time::Time;

/// The timers one actor has set, each tagged with a value of the actor's type `T`.
///
/// Tokens start at a value derived from the instance's start time, so a timer set by
/// an earlier instance of a restarted actor (still in flight in the world's queue) is
/// not mistaken for one of the new instance's: it is simply not found.
#[derive(Debug)]
pub struct Timers<T> {
    next: u64,
    one_shot: BTreeMap<u64, T>,
    standing: BTreeMap<u64, T>,
}

/// SplitMix64's finalizer: spreads a start time over the whole token space.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<T: Clone> Timers<T> {
    /// A registry for an actor instance started at `now`.
    pub fn new(now: Time) -> Timers<T> {
        Timers {
            next: mix(now) & !0xffff_ffff,
            one_shot: BTreeMap::new(),
            standing: BTreeMap::new(),
        }
    }

    fn token(&mut self) -> u64 {
        self.next = self.next.wrapping_add(1);
        self.next
    }

    /// Sets a one-shot timer: after `delay`, [`Timers::fired`] returns `what` once.
    pub fn set(&mut self, ctx: &mut Ctx, delay: Time, what: T) {
        let t = self.token();
        self.one_shot.insert(t, what);
        ctx.timer(delay, t);
    }

    /// A token that keeps meaning `what` every time it fires, for a component (an
    /// informer's backoff) that sets its own timers with a fixed token.
    pub fn standing(&mut self, what: T) -> u64 {
        let t = self.token();
        self.standing.insert(t, what);
        t
    }

    /// What a fired token means; `None` for a token this instance never set.
    pub fn fired(&mut self, token: u64) -> Option<T> {
        self.one_shot
            .remove(&token)
            .or_else(|| self.standing.get(&token).cloned())
    }

    /// Forgets every pending one-shot timer whose meaning matches `f`: when it fires,
    /// [`Timers::fired`] returns `None` (a probe rescheduled, a pod gone).
    pub fn cancel(&mut self, mut f: impl FnMut(&T) -> bool) {
        self.one_shot.retain(|_, t| !f(t));
    }

    /// Number of one-shot timers still pending.
    pub fn pending(&self) -> usize {
        self.one_shot.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Actor, Outgoing, Payload};

    #[derive(Clone, Debug, PartialEq)]
    enum T {
        Wake,
        Informer(u8),
    }

    fn token_of(out: &[Outgoing]) -> u64 {
        match out.last().map(|o| &o.payload) {
            Some(Payload::Timer(t)) => *t,
            _ => panic!("no timer set"),
        }
    }

    #[test]
    fn one_shot_timers_fire_once_and_standing_ones_every_time() {
        let mut out = Vec::new();
        let mut timers = Timers::new(0);
        let mut ctx = Ctx::new(0, Actor::ControllerManager, &mut out);
        timers.set(&mut ctx, 5, T::Wake);
        let wake = token_of(&out);
        let inf = timers.standing(T::Informer(3));
        assert_eq!(timers.fired(wake), Some(T::Wake));
        assert_eq!(timers.fired(wake), None);
        assert_eq!(timers.fired(inf), Some(T::Informer(3)));
        assert_eq!(timers.fired(inf), Some(T::Informer(3)));
    }

    #[test]
    fn a_restarted_instance_ignores_its_predecessors_timers() {
        let mut out = Vec::new();
        let mut old = Timers::new(1_000);
        let mut ctx = Ctx::new(1_000, Actor::ControllerManager, &mut out);
        old.set(&mut ctx, 5, T::Wake);
        let stale = token_of(&out);
        let mut new: Timers<T> = Timers::new(60_000);
        let mut ctx = Ctx::new(60_000, Actor::ControllerManager, &mut out);
        new.set(&mut ctx, 5, T::Wake);
        assert_eq!(new.fired(stale), None);
        assert_eq!(new.fired(token_of(&out)), Some(T::Wake));
    }
}
