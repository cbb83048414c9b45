//! containerd as its machine runs it: CRI calls go to the runtime's state; the calls
//! that run programs in containers (`Exec`, reading logs, stats) and the containers'
//! own load loops run against the [`Machine`], so they see this node and its network.

use crate::message::{Actor, Ctx, Payload};
use crate::node::cri::{CriOp, CriRequest, CriResponse, CriResult};
use crate::node::journal::Unit;
use crate::node::machine::Machine;

/// Handles one message to containerd on machine `m`.
pub fn handle(m: &mut Machine, ctx: &mut Ctx, from: Actor, payload: Payload) {
    match payload {
        Payload::Timer(t) if t >= crate::node::load::LOAD_TIMER_BASE => {
            crate::node::load_loop::tick(m, ctx, t)
        }
        Payload::Timer(t) if t >= crate::node::script::SCRIPT_TIMER_BASE => {
            crate::node::script::step(m, ctx, t)
        }
        Payload::Cri(CriRequest {
            id,
            op: CriOp::Node(call),
        }) => {
            let result = crate::node::server::serve(m, call).map(CriResult::Node);
            ctx.send(from, Payload::CriResp(CriResponse { id, result }));
        }
        p => m.runtime_mut().handle(ctx, from, p),
    }
    let lines = std::mem::take(&mut m.runtime_mut().journal);
    m.append_journal(Unit::Containerd, lines);
}
