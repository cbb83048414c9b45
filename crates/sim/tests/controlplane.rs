//! The control plane through the terminal: identities and RBAC, imperative `kubectl
//! create`, optimistic concurrency, apply's three-way merge, cascading deletion,
//! namespaces, Service allocation, admission messages, drain, and etcdctl formats.

mod common;
use common::{Term as T, NGINX};

fn running(out: &str) -> usize {
    out.lines().filter(|l| l.contains("Running")).count()
}

#[test]
fn jane_is_forbidden_until_a_rolebinding_lets_her_read_pods() {
    let mut t = T::new();
    assert_eq!(
        t.err("kubectl get pods --as=jane"),
        "Error from server (Forbidden): pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"\n"
    );
    assert_eq!(
        t.err("kubectl get deployments --user=jane -n kube-system"),
        "Error from server (Forbidden): deployments.apps is forbidden: User \"jane\" cannot list resource \"deployments\" in API group \"apps\" in the namespace \"kube-system\"\n"
    );
    let o = t.run("kubectl auth can-i list pods --as=jane");
    assert_eq!((o.exit_code, o.stdout.as_str()), (1, "no\n"));
    assert_eq!(t.ok("kubectl auth can-i '*' '*'"), "yes\n");
    assert_eq!(
        t.ok("kubectl create role pod-reader --verb=get,list,watch --resource=pods"),
        "role.rbac.authorization.k8s.io/pod-reader created\n"
    );
    assert_eq!(
        t.ok("kubectl create rolebinding jane-reads-pods --role=pod-reader --user=jane"),
        "rolebinding.rbac.authorization.k8s.io/jane-reads-pods created\n"
    );
    assert_eq!(t.ok("kubectl auth can-i list pods --as=jane"), "yes\n");
    assert_eq!(
        t.ok("kubectl auth can-i get pods --context=jane@kubernetes"),
        "yes\n"
    );
    let o = t.run("kubectl auth can-i delete pods --as=jane");
    assert_eq!((o.exit_code, o.stdout.as_str()), (1, "no\n"));
    let o = t.run("kubectl auth can-i list pods --as=jane -n kube-system");
    assert_eq!(o.stdout, "no\n");
    assert_eq!(
        t.ok("kubectl get pods --user=jane").len(),
        0,
        "allowed now; the empty list goes to stderr"
    );
    assert_eq!(
        t.err("kubectl delete pod x --user=jane"),
        "Error from server (Forbidden): pods \"x\" is forbidden: User \"jane\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\"\n"
    );
    assert_eq!(
        t.err("kubectl get nodes --as=jane"),
        "Error from server (Forbidden): nodes is forbidden: User \"jane\" cannot list resource \"nodes\" in API group \"\" at the cluster scope\n"
    );
    let o = t.run("kubectl auth can-i list nodes --as=jane");
    assert_eq!(
        o.stderr,
        "Warning: resource 'nodes' is not namespace scoped\n"
    );
}

#[test]
fn identities_come_from_the_kubeconfig_and_bad_credentials_get_401() {
    let mut t = T::new();
    assert_eq!(
        t.err("kubectl get pods --token=not-a-token"),
        "error: You must be logged in to the server (Unauthorized)\n"
    );
    assert_eq!(
        t.err("kubectl get pods --user=bob"),
        "error: auth info \"bob\" does not exist\n"
    );
    assert_eq!(
        t.err("kubectl get pods --context=prod"),
        "error: context \"prod\" does not exist\n"
    );
    assert_eq!(
        t.ok("kubectl auth whoami"),
        "ATTRIBUTE   VALUE\nUsername    kubernetes-admin\nGroups      [kubeadm:cluster-admins system:authenticated]\n"
    );
    assert_eq!(
        t.err("kubectl get pods --as=jane --user=jane"),
        "Error from server (Forbidden): users \"jane\" is forbidden: User \"jane\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope\n"
    );
}

#[test]
fn imperative_create_makes_the_objects_kubectl_makes() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl create namespace dev"),
        "namespace/dev created\n"
    );
    assert_eq!(
        t.err("kubectl create namespace dev"),
        "Error from server (AlreadyExists): namespaces \"dev\" already exists\n"
    );
    assert_eq!(
        t.err("kubectl create namespace"),
        "error: exactly one NAME is required, got 0\nSee 'kubectl create namespace -h' for help and examples\n"
    );
    assert_eq!(
        t.ok("kubectl create deployment web --image=nginx:1.27 --replicas=2 -n dev"),
        "deployment.apps/web created\n"
    );
    assert_eq!(
        t.err("kubectl create deployment web2 -n dev"),
        "error: required flag(s) \"image\" not set\n"
    );
    assert_eq!(
        t.ok("kubectl create service nodeport web --tcp=80:80 -n dev"),
        "service/web created\n"
    );
    assert_eq!(
        t.ok("kubectl create configmap cfg --from-literal=color=blue -n dev"),
        "configmap/cfg created\n"
    );
    assert_eq!(
        t.ok("kubectl create secret generic pw --from-literal=password=s3cret -n dev"),
        "secret/pw created\n"
    );
    assert_eq!(
        t.ok("kubectl create serviceaccount build -n dev"),
        "serviceaccount/build created\n"
    );
    assert_eq!(
        t.ok("kubectl create clusterrole node-reader --verb=get,list --resource=nodes"),
        "clusterrole.rbac.authorization.k8s.io/node-reader created\n"
    );
    assert_eq!(
        t.ok("kubectl create clusterrolebinding jane-nodes --clusterrole=node-reader --user=jane"),
        "clusterrolebinding.rbac.authorization.k8s.io/jane-nodes created\n"
    );
    assert_eq!(
        t.err("kubectl create clusterrolebinding x --user=jane"),
        "error: required flag(s) \"clusterrole\" not set\n"
    );
    assert_eq!(
        t.err("kubectl create rolebinding x --user=jane"),
        "error: exactly one of clusterrole or role must be specified\n"
    );
    let o = t.run("kubectl create role r --verb=get,peek --resource=pods");
    assert_eq!(
        o.stderr,
        "Warning: 'peek' is not a standard resource verb\n"
    );
    assert_eq!(
        t.err("kubectl create role r2 --verb=get --resource=widgets"),
        "error: the server doesn't have a resource type \"widgets\"\n"
    );
    assert!(t.ok("kubectl get nodes --as=jane").contains("node-1"));
    assert_eq!(
        t.ok("kubectl get cm cfg -n dev -o jsonpath={.data.color}"),
        "blue"
    );
    assert_eq!(
        t.ok("kubectl get secret pw -n dev -o jsonpath={.data.password}"),
        "czNjcmV0"
    );
    let d = t.ok(
        "kubectl create deployment x --image=registry.k8s.io/pause:3.10 --dry-run=client -o yaml",
    );
    assert!(
        d.contains("  - image: registry.k8s.io/pause:3.10\n        name: pause\n"),
        "{d}"
    );
    t.settle(20);
    // The service-account controller gave the new namespace its default account.
    assert!(t.ok("kubectl get sa -n dev").contains("default"));
    assert_eq!(running(&t.ok("kubectl get pods -n dev")), 2);
    let svc =
        t.ok("kubectl get svc web -n dev -o jsonpath={.spec.clusterIP},{.spec.ports[0].nodePort}");
    let (ip, port) = svc.split_once(',').unwrap();
    let oct: Vec<u32> = ip.split('.').map(|x| x.parse().unwrap()).collect();
    assert!(oct[0] == 10 && (96..112).contains(&oct[1]), "{ip}");
    let port: u32 = port.parse().unwrap();
    assert!((30000..=32767).contains(&port), "{port}");
}

#[test]
fn the_kubernetes_service_is_first_and_taken_addresses_are_refused() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl get svc kubernetes -o jsonpath={.spec.clusterIP}"),
        "10.96.0.1"
    );
    t.file(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: taken\nspec:\n  clusterIP: 10.96.0.1\n  ports:\n  - port: 80\n",
    );
    assert_eq!(
        t.err("kubectl apply -f svc.yaml"),
        "The Service \"taken\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.96.0.1\"}: failed to allocate IP 10.96.0.1: provided IP is already allocated\n"
    );
}

#[test]
fn a_replace_with_a_stale_resource_version_is_a_conflict() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    let rv = t.ok("kubectl get deployment nginx -o jsonpath={.metadata.resourceVersion}");
    t.ok("kubectl scale deployment nginx --replicas=4");
    let stale = NGINX.replace(
        "  name: nginx\n",
        &format!("  name: nginx\n  resourceVersion: \"{rv}\"\n"),
    );
    t.file("stale.yaml", &stale);
    assert_eq!(
        t.err("kubectl replace -f stale.yaml"),
        "Error from server (Conflict): error when replacing \"stale.yaml\": Operation cannot be fulfilled on deployments.apps \"nginx\": the object has been modified; please apply your changes to the latest version and try again\n"
    );
    assert_eq!(
        t.ok("kubectl replace -f nginx.yaml"),
        "deployment.apps/nginx replaced\n"
    );
    let g =
        t.ok("kubectl get deployment nginx -o jsonpath={.metadata.generation},{.spec.replicas}");
    assert_eq!(g, "3,3", "scale and replace each bumped the generation");
    t.settle(20);
    assert_eq!(
        t.ok("kubectl get deployment nginx -o jsonpath={.status.observedGeneration}"),
        "3"
    );
}

#[test]
fn apply_removes_a_field_dropped_from_the_file() {
    let mut t = T::new();
    let with_label = NGINX.replace(
        "  name: nginx\n",
        "  name: nginx\n  labels:\n    tier: web\n    team: a\n",
    );
    t.file("d.yaml", &with_label);
    t.ok("kubectl apply -f d.yaml");
    assert_eq!(
        t.ok("kubectl get deploy nginx -o jsonpath={.metadata.labels}"),
        "{\"team\":\"a\",\"tier\":\"web\"}"
    );
    t.file(
        "d.yaml",
        &with_label
            .replace("    team: a\n", "")
            .replace("replicas: 3", "replicas: 2"),
    );
    assert_eq!(
        t.ok("kubectl apply -f d.yaml"),
        "deployment.apps/nginx configured\n"
    );
    assert_eq!(
        t.ok("kubectl get deploy nginx -o jsonpath={.metadata.labels}"),
        "{\"tier\":\"web\"}"
    );
    assert_eq!(
        t.ok("kubectl get deploy nginx -o jsonpath={.spec.replicas}"),
        "2"
    );
    assert_eq!(
        t.ok("kubectl apply -f d.yaml"),
        "deployment.apps/nginx unchanged\n"
    );
}

#[test]
fn background_cascade_removes_replicasets_and_pods() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(20);
    assert_eq!(
        t.ok("kubectl delete deployment nginx"),
        "deployment.apps \"nginx\" deleted from default namespace\n"
    );
    t.settle(60);
    assert_eq!(
        t.run("kubectl get rs").stderr,
        "No resources found in default namespace.\n"
    );
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn foreground_cascade_keeps_the_owner_until_its_dependents_are_gone() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(20);
    t.ok("kubectl delete deployment nginx --cascade=foreground --wait=false");
    let d = t.ok("kubectl get deployment nginx -o jsonpath={.metadata.finalizers},{.metadata.deletionTimestamp}");
    assert!(d.starts_with("[\"foregroundDeletion\"],2026-"), "{d}");
    t.settle(90);
    assert_eq!(
        t.err("kubectl get deployment nginx"),
        "Error from server (NotFound): deployments.apps \"nginx\" not found\n"
    );
    assert_eq!(
        t.run("kubectl get rs").stderr,
        "No resources found in default namespace.\n"
    );
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn orphan_cascade_leaves_replicasets_and_pods_running_without_owners() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(20);
    t.ok("kubectl delete deployment nginx --cascade=orphan");
    t.settle(30);
    assert_eq!(
        t.err("kubectl get deployment nginx"),
        "Error from server (NotFound): deployments.apps \"nginx\" not found\n"
    );
    let rs = t.ok("kubectl get rs -o jsonpath={.items[*].metadata.ownerReferences}");
    assert_eq!(rs, "", "the ReplicaSet lost its ownerReference");
    assert_eq!(t.ok("kubectl get rs -o name").lines().count(), 1);
    assert_eq!(running(&t.ok("kubectl get pods")), 3);
}

#[test]
fn a_deleted_namespace_terminates_empties_and_disappears() {
    let mut t = T::new();
    t.ok("kubectl create namespace dev");
    t.ok("kubectl apply -f nginx.yaml -n dev");
    t.ok("kubectl create configmap cfg -n dev");
    t.settle(20);
    assert_eq!(running(&t.ok("kubectl get pods -n dev")), 3);
    assert_eq!(
        t.ok("kubectl delete namespace dev --wait=false"),
        "namespace \"dev\" deleted\n"
    );
    let ns = t.ok("kubectl get ns dev");
    assert!(ns.contains("dev    Terminating"), "{ns}");
    t.file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n  namespace: dev\n",
    );
    assert_eq!(
        t.err("kubectl apply -f cm.yaml"),
        "Error from server (Forbidden): error when creating \"cm.yaml\": configmaps \"late\" is forbidden: unable to create new content in namespace dev because it is being terminated\n"
    );
    assert_eq!(
        t.err("kubectl delete namespace dev --wait=false"),
        "Error from server (Conflict): Operation cannot be fulfilled on namespaces \"dev\": The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.\n"
    );
    let cond = t.ok("kubectl get ns dev -o jsonpath={.status.conditions[3].message}");
    assert!(
        cond.starts_with("Some resources are remaining: pods has 3 resource instances"),
        "{cond}"
    );
    t.settle(60);
    assert_eq!(
        t.err("kubectl get ns dev"),
        "Error from server (NotFound): namespaces \"dev\" not found\n"
    );
    assert_eq!(
        t.err("kubectl delete namespace kube-system"),
        "Error from server (Forbidden): namespaces \"kube-system\" is forbidden: this namespace may not be deleted\n"
    );
}

#[test]
fn quota_and_limit_ranges_speak_through_kubectl() {
    let mut t = T::new();
    t.file(
        "policy.yaml",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard:\n    pods: \"1\"\n---\napiVersion: v1\nkind: LimitRange\nmetadata:\n  name: lr\nspec:\n  limits:\n  - type: Container\n    default:\n      cpu: 500m\n    defaultRequest:\n      cpu: 100m\n",
    );
    t.ok("kubectl apply -f policy.yaml");
    let pod = |n: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {n}\nspec:\n  containers:\n  - name: c\n    image: nginx:1.27\n")
    };
    t.file("p1.yaml", &pod("p1"));
    t.file("p2.yaml", &pod("p2"));
    t.ok("kubectl apply -f p1.yaml");
    assert_eq!(
        t.ok("kubectl get pod p1 -o jsonpath={.spec.containers[0].resources}"),
        "{\"limits\":{\"cpu\":\"500m\"},\"requests\":{\"cpu\":\"100m\"}}"
    );
    assert!(t.ok("kubectl get pod p1 -o jsonpath={.metadata.annotations}").ends_with("\"kubernetes.io/limit-ranger\":\"LimitRanger plugin set: cpu request for container c; cpu limit for container c\"}"));
    // The QoS class is computed after LimitRanger's defaults: Burstable, not BestEffort.
    assert_eq!(
        t.ok("kubectl get pod p1 -o jsonpath={.status.qosClass}"),
        "Burstable"
    );
    assert_eq!(
        t.err("kubectl apply -f p2.yaml"),
        "Error from server (Forbidden): error when creating \"p2.yaml\": pods \"p2\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1\n"
    );
    // The quota controller keeps status.used: kubectl shows Used/Hard, and usage falls
    // when the pod goes.
    t.settle(2);
    assert_eq!(
        t.ok("kubectl get quota"),
        "NAME   AGE   REQUEST     LIMIT\nq      2s    pods: 1/1   \n"
    );
    t.ok("kubectl delete pod p1 --grace-period=0 --force");
    t.settle(5);
    assert!(t.ok("kubectl get quota").contains("pods: 0/1"));
    t.ok("kubectl apply -f p2.yaml");
}

#[test]
fn drain_evicts_managed_pods_and_refuses_bare_ones_without_force() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.file(
        "bare.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bare\nspec:\n  nodeName: node-1\n  containers:\n  - name: c\n    image: nginx:1.27\n",
    );
    t.ok("kubectl apply -f bare.yaml");
    t.settle(20);
    let o = t.run("kubectl drain node-1");
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.stdout, "node/node-1 cordoned\n");
    // As on kind: node-1 also runs kindnet's and kube-proxy's DaemonSet pods.
    let daemons: Vec<String> = t
        .ok("kubectl get pods -n kube-system -o wide")
        .lines()
        .filter(|l| {
            l.contains(" node-1 ") && (l.starts_with("kindnet-") || l.starts_with("kube-proxy-"))
        })
        .map(|l| format!("kube-system/{}", l.split_whitespace().next().unwrap()))
        .collect();
    assert_eq!(daemons.len(), 2);
    let ds_err = format!(
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): {}",
        daemons.join(", ")
    );
    assert_eq!(
        o.stderr,
        format!("error: unable to drain node \"node-1\" due to error: [cannot delete Pods that declare no controller (use --force to override): default/bare, {ds_err}], continuing command...\nThere are pending nodes to be drained:\n node-1\ncannot delete Pods that declare no controller (use --force to override): default/bare\n{ds_err}\n")
    );
    let on_node1: Vec<String> = t
        .ok("kubectl get pods -o wide")
        .lines()
        .filter(|l| l.contains("node-1"))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    let o = t.run("kubectl drain node-1 --force --ignore-daemonsets");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert_eq!(
        o.stderr,
        format!(
            "Warning: deleting Pods that declare no controller: default/bare; ignoring DaemonSet-managed Pods: {}\n",
            daemons.join(", ")
        )
    );
    let mut lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.remove(0), "node/node-1 already cordoned");
    assert_eq!(lines.pop(), Some("node/node-1 drained"));
    for p in &on_node1 {
        assert!(
            lines.contains(&format!("evicting pod default/{p}").as_str()),
            "{lines:?}"
        );
        assert!(
            lines.contains(&format!("pod/{p} evicted").as_str()),
            "{lines:?}"
        );
    }
    t.settle(20);
    let pods = t.ok("kubectl get pods -o wide");
    assert_eq!(running(&pods), 3, "{pods}");
    assert!(!pods.contains("node-1"), "{pods}");
    assert!(t
        .ok("kubectl get nodes")
        .contains("node-1   Ready,SchedulingDisabled"));
}

#[test]
fn events_print_in_kubectls_columns() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(20);
    let ev = t.ok("kubectl get events");
    assert!(ev.starts_with("LAST SEEN   TYPE     REASON"), "{ev}");
    let squeezed: Vec<String> = ev
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert!(
        squeezed.iter().any(|l| l.ends_with(
            "Normal ScalingReplicaSet deployment/nginx Scaled up replica set nginx-587f8dd65d from 0 to 3"
        )),
        "{ev}"
    );
    let d = t.ok("kubectl describe deployment nginx");
    assert!(d.contains("Events:\n  Type    Reason             Age   From                   Message\n  ----    ------             ----  ----                   -------\n"), "{d}");
}

#[test]
fn etcdctl_prints_what_etcdctl_3_6_prints() {
    let mut t = T::new();
    let j = t.ok("etcdctl get /registry/namespaces/default -w json --keys-only");
    assert!(j.starts_with("{\"header\":{\"cluster_id\":14841639068965178418,\"member_id\":10276657743932975437,\"revision\":"), "{j}");
    assert!(j.ends_with(",\"raft_term\":2},\"kvs\":[{\"key\":\"L3JlZ2lzdHJ5L25hbWVzcGFjZXMvZGVmYXVsdA==\",\"create_revision\":1,\"mod_revision\":1,\"version\":1}],\"count\":1}\n"), "{j}");
    assert_eq!(
        t.ok("etcdctl get /registry/namespaces/ --prefix --keys-only"),
        "/registry/namespaces/default\n\n/registry/namespaces/kube-node-lease\n\n/registry/namespaces/kube-public\n\n/registry/namespaces/kube-system\n\n/registry/namespaces/local-path-storage\n\n"
    );
    let none = t.ok("etcdctl get /nothing -w json");
    assert!(
        none.ends_with("\"raft_term\":2}}\n"),
        "no kvs, no count: {none}"
    );
    let table = t.ok("etcdctl endpoint status -w table");
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[1], "|    ENDPOINT    |        ID        | VERSION | STORAGE VERSION | DB SIZE | IN USE | PERCENTAGE NOT IN USE | QUOTA  | IS LEADER | IS LEARNER | RAFT TERM | RAFT INDEX | RAFT APPLIED INDEX | ERRORS | DOWNGRADE TARGET VERSION | DOWNGRADE ENABLED |");
    assert!(
        lines[3].starts_with("| 127.0.0.1:2379 | 8e9e05c52164694d |   3.6.5 |           3.6.0 |"),
        "{table}"
    );
    let rev: u64 = serde_json_rev(&t.ok("etcdctl get x -w json"));
    assert_eq!(
        t.ok(&format!("etcdctl compact {rev}")),
        format!("compacted revision {rev}\n")
    );
    let o = t.run("etcdctl get /registry/namespaces/default --rev 1");
    assert_eq!(
        (o.exit_code, o.stderr.as_str()),
        (
            1,
            "Error: etcdserver: mvcc: required revision has been compacted\n"
        )
    );
    let o = t.run("etcdctl watch /registry/ --prefix --rev 2");
    assert_eq!(o.exit_code, 5);
    assert_eq!(o.stderr, "watch was canceled (etcdserver: mvcc: required revision has been compacted)\nError: watch is canceled by the server\n");
    t.ok("kubectl create configmap c1");
    let v = t.ok("etcdctl get /registry/configmaps/default/c1 --print-value-only");
    assert!(
        v.starts_with("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\""),
        "{v}"
    );
}

fn serde_json_rev(s: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(s).unwrap();
    v["header"]["revision"].as_u64().unwrap()
}

#[test]
fn the_apiserver_compacts_etcd_every_five_minutes() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(5 * 60 + 5);
    assert_eq!(
        t.w.observe().etcd().store.compact_revision(),
        0,
        "the first interval only notes a candidate"
    );
    let noted = t.w.observe().etcd().store.revision();
    t.settle(5 * 60);
    let compacted = t.w.observe().etcd().store.compact_revision();
    assert!(
        compacted > 0 && compacted <= noted,
        "{compacted} vs {noted}"
    );
    let o = t.run("etcdctl get /registry/namespaces/default --rev 1");
    assert_eq!(
        o.stderr,
        "Error: etcdserver: mvcc: required revision has been compacted\n"
    );
    // Clients never noticed: the watch cache serves them from memory.
    assert_eq!(running(&t.ok("kubectl get pods")), 3);
}

#[test]
fn priority_classes_list_create_describe_and_protect_the_system_ones() {
    let mut t = T::new();
    // Both bootstrap classes, with upstream's columns (PREEMPTIONPOLICY after AGE).
    let want = "NAME                      VALUE        GLOBAL-DEFAULT   AGE   PREEMPTIONPOLICY
system-cluster-critical   2000000000   false            0s    PreemptLowerPriority
system-node-critical      2000001000   false            0s    PreemptLowerPriority
";
    assert_eq!(t.ok("kubectl get priorityclasses"), want);
    assert_eq!(t.ok("kubectl get pc"), want);
    assert_eq!(
        t.ok("kubectl create priorityclass high-priority --value=1000 --description=\"high priority\""),
        "priorityclass.scheduling.k8s.io/high-priority created\n"
    );
    assert_eq!(
        t.ok("kubectl create pc default-priority --value=10 --global-default=true --preemption-policy=Never"),
        "priorityclass.scheduling.k8s.io/default-priority created\n"
    );
    t.settle(5);
    assert_eq!(
        t.ok("kubectl get pc"),
        "NAME                      VALUE        GLOBAL-DEFAULT   AGE   PREEMPTIONPOLICY
default-priority          10           true             5s    Never
high-priority             1000         false            5s    PreemptLowerPriority
system-cluster-critical   2000000000   false            5s    PreemptLowerPriority
system-node-critical      2000001000   false            5s    PreemptLowerPriority
"
    );
    assert_eq!(
        t.ok("kubectl describe pc high-priority"),
        "Name:              high-priority
Value:             1000
GlobalDefault:     false
PreemptionPolicy:  PreemptLowerPriority
Description:       high priority
Annotations:       <none>
Events:            <none>
"
    );
    assert_eq!(
        t.ok("kubectl create priorityclass x --value=1 --dry-run=client -o yaml"),
        "apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: x
preemptionPolicy: PreemptLowerPriority
value: 1
"
    );
    // kubectl wraps the server's errors for this generator.
    assert_eq!(
        t.err("kubectl create priorityclass high-priority --value=5"),
        "error: failed to create priorityclass: priorityclasses.scheduling.k8s.io \"high-priority\" already exists\n"
    );
    assert_eq!(
        t.err("kubectl create priorityclass second-default --global-default"),
        "error: failed to create priorityclass: priorityclasses.scheduling.k8s.io \"second-default\" is forbidden: PriorityClass default-priority is already marked as default. Only one default can exist\n"
    );
    assert_eq!(
        t.err("kubectl create priorityclass huge --value=2000000000"),
        "error: failed to create priorityclass: PriorityClass.scheduling.k8s.io \"huge\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000\n"
    );
    assert_eq!(
        t.err("kubectl create priorityclass bad --value=abc"),
        "error: invalid argument \"abc\" for \"--value\" flag: strconv.ParseInt: parsing \"abc\": invalid syntax\n"
    );
    assert_eq!(
        t.err("kubectl delete pc system-node-critical"),
        "Error from server (Forbidden): priorityclasses.scheduling.k8s.io \"system-node-critical\" is forbidden: this is a system priority class and cannot be deleted\n"
    );
    assert_eq!(
        t.ok("kubectl delete pc high-priority"),
        "priorityclass.scheduling.k8s.io \"high-priority\" deleted\n"
    );
    assert_eq!(t.ok("kubectl get pc -o name").lines().count(), 3);
}

/// ReplicaSet slow start against a quota: batches of 1, 2, 4… stop at the first batch
/// with a failure (1 + 2 created, 4 refused, 3 never tried), and the next attempt waits
/// for the work queue's exponential backoff instead of retrying at once.
#[test]
fn replicaset_creations_slow_start_and_back_off_against_a_quota() {
    let mut t = T::new();
    t.file(
        "q.yaml",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard:\n    pods: \"3\"\n",
    );
    t.file(
        "rs.yaml",
        "apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
spec:
  replicas: 10
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
",
    );
    t.ok("kubectl apply -f q.yaml");
    t.settle(1);
    t.ok("kubectl apply -f rs.yaml");
    t.settle(30);
    let events = t.ok("kubectl get events --field-selector involvedObject.name=web");
    let created = events.matches("SuccessfulCreate").count();
    let refused = events.matches("FailedCreate").count();
    assert_eq!(created, 3, "{events}");
    // First attempt: 4 refused (the third batch); then one per retry (diff 7 restarts at
    // a batch of 1), retries 5 ms, 10 ms, 20 ms… apart. All at once, 7 per attempt, or
    // retrying without backoff, this would be far more.
    assert!((10..=60).contains(&refused), "{refused} refused:\n{events}");
    assert!(events.contains("Error creating: pods \"web-"));
    assert!(events.contains(
        "\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3"
    ));
    assert_eq!(running(&t.ok("kubectl get pods")), 3);
}

/// Regression (property test seed 28): the garbage collector asked once to delete the
/// ReplicaSet of a deleted Deployment, etcd was stopped at that moment, and the
/// collector never asked again, so the ReplicaSet and its pods lived on. It retries.
#[test]
fn garbage_collection_retries_a_delete_that_failed() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(30);
    t.ok("kubectl delete deployment nginx --wait=false");
    t.ok("sim stop etcd");
    t.settle(20);
    t.ok("sim start etcd");
    t.settle(90);
    assert_eq!(
        t.run("kubectl get rs").stderr,
        "No resources found in default namespace.\n"
    );
    assert_eq!(running(&t.ok("kubectl get pods")), 0);
}

/// ReplicaSet slow start and burst, from the apiserver's audit log: a ReplicaSet of 600
/// creates at most 500 pods per sync (`BurstReplicas`), in batches of 1, 2, 4, … each
/// sent when the previous one has answered; the next sync creates the other 100 the
/// same way.
#[test]
fn replicaset_creates_in_slow_start_batches_of_at_most_500_per_sync() {
    let mut t = T::new();
    t.file(
        "rs.yaml",
        "apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: many
spec:
  replicas: 600
  selector:
    matchLabels:
      app: many
  template:
    metadata:
      labels:
        app: many
    spec:
      schedulerName: nobody
      containers:
      - name: c
        image: nginx:1.27
",
    );
    t.ok("kubectl apply -f rs.yaml");
    t.settle(10);
    let api = t.w.observe().apiserver().unwrap();
    let mut batches: Vec<(u64, usize)> = Vec::new();
    for e in api.audit() {
        if e.verb == kubeloop_sim::api::Verb::Create
            && e.path == "/api/v1/namespaces/default/pods"
            && e.user == "system:kube-controller-manager"
        {
            match batches.last_mut() {
                Some((at, n)) if *at == e.received => *n += 1,
                _ => batches.push((e.received, 1)),
            }
        }
    }
    let sizes: Vec<usize> = batches.iter().map(|b| b.1).collect();
    assert_eq!(
        sizes,
        [1, 2, 4, 8, 16, 32, 64, 128, 245, 1, 2, 4, 8, 16, 32, 37],
        "{batches:?}"
    );
}

/// Scaling a Deployment up does not turn into a storm of refused status writes: the
/// ReplicaSet controller's worker waits for each `UpdateStatus` (events meanwhile fold
/// into one more sync), so its writes are about one per round trip, not one per pod
/// event, and the status still ends at the true counts.
#[test]
fn a_scale_up_writes_the_replicaset_status_without_a_conflict_storm() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(10);
    t.ok("kubectl scale deployment nginx --replicas=60");
    t.settle(30);
    let api = t.w.observe().apiserver().unwrap();
    let writes: Vec<u16> = api
        .audit()
        .filter(|e| {
            e.path
                .starts_with("/apis/apps/v1/namespaces/default/replicasets/")
                && e.path.ends_with("/status")
        })
        .map(|e| e.code)
        .collect();
    let conflicts = writes.iter().filter(|c| **c == 409).count();
    assert!(
        conflicts <= 2,
        "{conflicts} of {} status writes refused",
        writes.len()
    );
    assert!(
        writes.len() < 60,
        "{} status writes for 57 new pods",
        writes.len()
    );
    let out = t.ok("kubectl get rs");
    assert!(out.contains("   60        60        60   "), "{out}");
}

/// A ReplicaSet whose creations fail gets upstream's ReplicaFailure condition
/// (FailedCreate, the first error of the round as message); its Deployment copies it;
/// both lose it once creations succeed again.
#[test]
fn failed_creations_set_the_replica_failure_condition() {
    let mut t = T::new();
    t.file(
        "q.yaml",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard:\n    pods: \"3\"\n",
    );
    t.ok("kubectl apply -f q.yaml");
    t.settle(1);
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl scale deployment nginx --replicas=6");
    t.settle(20);
    let cond = t.ok(
        "kubectl get rs -o 'jsonpath={.items[0].status.conditions[?(@.type==\"ReplicaFailure\")].reason}: {.items[0].status.conditions[0].message}'",
    );
    assert!(cond.starts_with("FailedCreate: pods \"nginx-"), "{cond}");
    assert!(
        cond.ends_with(
            "\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3"
        ),
        "{cond}"
    );
    let d = t.ok("kubectl describe deployment nginx");
    assert!(
        d.contains("  ReplicaFailure   True    FailedCreate\n"),
        "{d}"
    );
    let rs = t.ok("kubectl describe rs");
    assert!(
        rs.lines()
            .any(|l| l.starts_with("  ReplicaFailure") && l.ends_with("True    FailedCreate")),
        "{rs}"
    );
    t.ok("kubectl delete resourcequota q");
    t.settle(40);
    let d = t.ok("kubectl describe deployment nginx");
    assert!(!d.contains("ReplicaFailure"), "{d}");
    assert_eq!(running(&t.ok("kubectl get pods")), 6);
    assert_eq!(
        t.ok("kubectl get rs -o jsonpath={.items[0].status.conditions}"),
        ""
    );
}

/// Parallel creates cannot share the last unit of a quota: ResourceQuota admission charges
/// a create before it is stored (upstream updates `status.used` first), so the second
/// pod of the ReplicaSet's second batch is refused even though the first has not reached
/// the watch cache yet.
#[test]
fn parallel_creates_do_not_exceed_a_quota() {
    let mut t = T::new();
    t.file(
        "q.yaml",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard:\n    pods: \"2\"\n",
    );
    t.ok("kubectl apply -f q.yaml");
    t.settle(1);
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(30);
    let pods = t.ok("kubectl get pods");
    assert_eq!(running(&pods), 2, "{pods}");
    let events = t.ok("kubectl get events --field-selector reason=FailedCreate");
    assert!(
        events.contains("exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"),
        "{events}"
    );
}
