//! `kubectl config` through the terminal: the kubeconfig kubectl shows, and
//! `set-context --current --namespace` / `use-context` changing what later commands do.

mod common;
use common::Term as T;

#[test]
fn config_shows_the_terminals_kubeconfig() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl config current-context"),
        "kubernetes-admin@kubernetes\n"
    );
    assert_eq!(
        t.ok("kubectl config get-contexts"),
        "CURRENT   NAME                          CLUSTER      AUTHINFO           NAMESPACE\n          jane@kubernetes               kubernetes   jane               \n*         kubernetes-admin@kubernetes   kubernetes   kubernetes-admin   \n"
    );
    let v = t.ok("kubectl config view --minify");
    assert_eq!(
        v,
        "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: DATA+OMITTED
    server: https://172.18.0.2:6443
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: kubernetes-admin
  name: kubernetes-admin@kubernetes
current-context: kubernetes-admin@kubernetes
kind: Config
preferences: {}
users:
- name: kubernetes-admin
  user:
    client-certificate-data: DATA+OMITTED
    client-key-data: DATA+OMITTED
"
    );
    assert_eq!(
        t.ok("kubectl config view -o jsonpath={.contexts[*].name}"),
        "jane@kubernetes kubernetes-admin@kubernetes"
    );
}

#[test]
fn set_context_namespace_applies_to_later_commands() {
    let mut t = T::new();
    t.ok("kubectl create namespace dev");
    t.settle(2);
    assert_eq!(
        t.ok("kubectl config set-context --current --namespace=dev"),
        "Context \"kubernetes-admin@kubernetes\" modified.\n"
    );
    assert_eq!(
        t.ok("kubectl config view --minify -o jsonpath={..namespace}"),
        "dev"
    );
    assert_eq!(t.ok("kubectl run web --image=nginx"), "pod/web created\n");
    assert_eq!(
        t.ok("kubectl get pod web -o jsonpath={.metadata.namespace}"),
        "dev"
    );
    assert_eq!(
        t.run("kubectl get pods -n default").stderr,
        "No resources found in default namespace.\n"
    );
    // Client-side generators name the namespace only for an explicit -n, as kubectl does.
    let y = t.ok("kubectl run x --image=nginx --dry-run=client -o yaml");
    assert!(!y.contains("namespace:"), "{y}");
    t.ok("kubectl config set-context --current --namespace=");
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn use_context_switches_the_user() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl config use-context jane@kubernetes"),
        "Switched to context \"jane@kubernetes\".\n"
    );
    assert_eq!(
        t.err("kubectl get pods"),
        "Error from server (Forbidden): pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"\n"
    );
    t.ok("kubectl config use-context kubernetes-admin@kubernetes");
    t.ok("kubectl get nodes");
    for (line, err) in [
        (
            "kubectl config use-context nope",
            "error: no context exists with the name: \"nope\"\n",
        ),
        (
            "kubectl config set-context",
            "error: you must specify a non-empty context name or --current\n",
        ),
        (
            "kubectl config set-context x --current",
            "error: you cannot specify both a context name and --current\n",
        ),
        (
            "kubectl config bogus",
            "error: unknown command \"bogus\" for \"kubectl config\"\n",
        ),
        (
            "kubectl config view --bogus",
            "error: unknown flag: --bogus\nSee 'kubectl config view --help' for usage.\n",
        ),
    ] {
        assert_eq!(t.err(line), err, "{line}");
    }
}

#[test]
fn set_context_makes_a_new_context_that_use_context_switches_to() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl config set-context dev --cluster=kubernetes --user=jane --namespace=dev"),
        "Context \"dev\" created.\n"
    );
    assert_eq!(
        t.ok("kubectl config set-context dev --user=kubernetes-admin"),
        "Context \"dev\" modified.\n"
    );
    let rows = t.ok("kubectl config get-contexts");
    assert!(
        rows.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["dev", "kubernetes", "kubernetes-admin", "dev"]),
        "{rows}"
    );
    t.ok("kubectl config use-context dev");
    assert_eq!(t.ok("kubectl config current-context"), "dev\n");
    t.ok("kubectl create namespace dev");
    let pods = t.run("kubectl get pods");
    assert_eq!(
        (pods.exit_code, pods.stderr.as_str()),
        (0, "No resources found in dev namespace.\n")
    );
    // A context whose cluster and user the kubeconfig doesn't have can't be used.
    t.ok("kubectl config set-context kind --cluster=kind-kind --user=kind-kind");
    assert_eq!(
        t.err("kubectl --context=kind get pods"),
        "error: invalid configuration: [user \"kind-kind\" was not found for context \"kind\", cluster \"kind-kind\" was not found for context \"kind\", no server found for cluster \"kind-kind\"]\n"
    );
    let view = t.ok("kubectl config view -o jsonpath={.contexts[?(@.name==\"kind\")].context}");
    assert_eq!(view, "{\"cluster\":\"kind-kind\",\"user\":\"kind-kind\"}");
}
