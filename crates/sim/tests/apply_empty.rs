//! `kubectl apply -f` on a file that holds no object: kubectl's "no objects passed to
//! apply" (a new, empty editor tab applied with Ctrl+Enter).

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

#[test]
fn applying_a_file_without_objects_says_so() {
    let mut w = World::new(ClusterConfig::default());
    for text in ["", "# only a comment\n", "---\n"] {
        let files: BTreeMap<String, String> = [("new.yaml".to_string(), text.to_string())].into();
        let o = cmd::run(&mut w, "kubectl apply -f new.yaml", &files, 10 * SECOND);
        assert_eq!(o.exit_code, 1, "{text:?}: {o:?}");
        assert_eq!(o.stderr, "error: no objects passed to apply\n", "{text:?}");
        assert_eq!(o.stdout, "");
    }
}
