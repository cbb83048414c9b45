//! A load loop's batches: a container whose command is a request loop sends, each
//! second, [`WALKS_PER_TICK`] real requests through DNS and the node's rules, each standing
//! for its share of the loop's rate (see [`crate::node::load`]).

use crate::message::Ctx;
use crate::node::load::{LOAD_TICK, WALKS_PER_TICK};
use crate::node::machine::Machine;

/// One batch of a load loop on this machine: the container's requests of the last
/// second; sets the timer for the next batch while the container runs.
pub fn tick(m: &mut Machine, ctx: &mut Ctx, token: u64) {
    let rt = m.runtime();
    let running = rt
        .load_timers
        .get(&token)
        .and_then(|id| rt.containers.get(id))
        .filter(|c| c.state == crate::node::cri::ContainerState::Running);
    let Some(c) = running else {
        m.runtime_mut().load_timers.remove(&token);
        return;
    };
    let Some((url, period)) = c.behaviour.load.clone() else {
        return;
    };
    let Some(sb) = rt.sandboxes.get(&c.sandbox) else {
        return;
    };
    let src = m.source(sb, "Wget");
    let rate = (LOAD_TICK / period.max(1)).max(1);
    let walks = rate.min(WALKS_PER_TICK);
    m.net().state().weight = rate / walks;
    let args: Vec<String> = vec!["-q".into(), "-O-".into(), url];
    for _ in 0..walks {
        crate::node::curl::wget(m.net(), &src, &args);
    }
    m.net().state().weight = 1;
    ctx.timer(LOAD_TICK, token);
}
