//! `kubectl --help` and `kubectl CMD --help`: kubectl's usage text in its layout, written
//! for kubeloop and listing only what kubeloop's kubectl supports.

use super::flags::Flag;

/// kubectl's command groups, as `kubectl --help` prints them: (heading, [(command, summary)]).
const GROUPS: &[(&str, &[(&str, &str)])] = &[
    ("Basic Commands (Beginner)", &[
        ("create", "Create a resource from a file or from stdin"),
        ("expose", "Take a replication controller, service, deployment or pod and expose it as a new Kubernetes service"),
        ("run", "Run a particular image on the cluster"),
        ("set", "Set specific features on objects"),
    ]),
    ("Basic Commands (Intermediate)", &[
        ("explain", "Get documentation for a resource"),
        ("get", "Display one or many resources"),
        ("edit", "Edit a resource on the server"),
        ("delete", "Delete resources by file names, stdin, resources and names, or by resources and label selector"),
    ]),
    ("Deploy Commands", &[
        ("rollout", "Manage the rollout of a resource"),
        ("scale", "Set a new size for a deployment, replica set, or replication controller"),
        ("autoscale", "Auto-scale a deployment, replica set, stateful set, or replication controller"),
    ]),
    ("Cluster Management Commands", &[
        ("cluster-info", "Display cluster information"),
        ("top", "Display resource (CPU/memory) usage"),
        ("cordon", "Mark node as unschedulable"),
        ("uncordon", "Mark node as schedulable"),
        ("drain", "Drain node in preparation for maintenance"),
        ("taint", "Update the taints on one or more nodes"),
    ]),
    ("Troubleshooting and Debugging Commands", &[
        ("describe", "Show details of a specific resource or group of resources"),
        ("logs", "Print the logs for a container in a pod"),
        ("exec", "Execute a command in a container"),
        ("auth", "Inspect authorization"),
        ("port-forward", "Forward one or more local ports to a pod"),
        ("cp", "Copy files and directories to and from containers"),
    ]),
    ("Advanced Commands", &[
        ("diff", "Diff the live version against a would-be applied version"),
        ("apply", "Apply a configuration to a resource by file name or stdin"),
        ("patch", "Update fields of a resource"),
        ("replace", "Replace a resource by file name or stdin"),
        ("wait", "Experimental: Wait for a specific condition on one or many resources"),
    ]),
    ("Settings Commands", &[
        ("label", "Update the labels on a resource"),
        ("annotate", "Update the annotations on a resource"),
    ]),
    ("Other Commands", &[
        ("api-resources", "Print the supported API resources on the server"),
        ("api-versions", "Print the supported API versions on the server, in the form of \"group/version\""),
        ("config", "Modify kubeconfig files"),
        ("version", "Print the client and server version information"),
    ]),
];

/// What common flags mean, for `kubectl CMD --help`.
const FLAG_HELP: &[(&str, &str)] = &[
    ("all-namespaces", "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace."),
    ("output", "Output format. One of: (json, yaml, name, wide, custom-columns, jsonpath)."),
    ("selector", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'."),
    ("filename", "Filename, directory, or URL to files identifying the resource."),
    ("recursive", "Process the directory used in -f, --filename recursively."),
    ("dry-run", "Must be \"none\", \"server\", or \"client\". If client strategy, only print the object that would be sent, without sending it."),
    ("image", "The image for the container to run."),
    ("replicas", "Number of replicas to create."),
    ("port", "The port that this container exposes."),
    ("container", "Container name. If omitted, use the kubectl.kubernetes.io/default-container annotation or the first container in the pod."),
    ("follow", "Specify if the logs should be streamed."),
    ("timeout", "The length of time to wait before giving up."),
    ("watch", "After listing/getting the requested object, watch for changes."),
    ("show-labels", "When printing, show all labels as the last column (default hide labels column)."),
    ("sort-by", "If non-empty, sort list types using this field specification (a JSONPath expression)."),
    ("field-selector", "Selector (field query) to filter on, supports '=', '==', and '!='."),
    ("tail", "Lines of recent log file to display."),
    ("previous", "If true, print the logs for the previous instance of the container in a pod if it exists."),
    ("force", "If true, immediately remove resources from API and bypass graceful deletion."),
    ("all", "Select all resources in the namespace of the specified resource types."),
    ("for", "The condition to wait on: [create|delete|condition=condition-name[=condition-value]|jsonpath='{JSONPath expression}'=[JSONPath value]]."),
];

/// The summary of a kubectl command, if kubeloop has it.
pub fn summary(sub: &str) -> Option<&'static str> {
    GROUPS
        .iter()
        .flat_map(|(_, cmds)| cmds.iter())
        .find(|(c, _)| *c == sub)
        .map(|(_, s)| *s)
}

/// `kubectl --help`.
pub fn kubectl() -> String {
    let mut s = String::from("kubectl controls the Kubernetes cluster manager.\n\n Find more information at: https://kubernetes.io/docs/reference/kubectl/\n\n");
    for (heading, cmds) in GROUPS {
        s.push_str(&format!("{heading}:\n"));
        for (c, summary) in *cmds {
            s.push_str(&format!("  {c:<15} {summary}\n"));
        }
        s.push('\n');
    }
    s.push_str("Usage:\n  kubectl [flags] [options]\n\nUse \"kubectl <command> --help\" for more information about a given command.\nUse \"kubectl options\" for a list of global command-line options (applies to all commands).\n");
    s
}

/// `kubectl CMD --help`: the summary, the command's options, and its usage.
pub fn command(sub: &str, flags: &[Flag]) -> String {
    let mut s = format!("{}.\n\n", summary(sub).unwrap_or(sub));
    if !flags.is_empty() {
        s.push_str("Options:\n");
        for f in flags {
            let short = f.short.map_or(String::new(), |c| format!("-{c}, "));
            let default = if f.value { "''" } else { "false" };
            s.push_str(&format!("    {short}--{}={default}:\n", f.long));
            if let Some((_, h)) = FLAG_HELP.iter().find(|(n, _)| *n == f.long) {
                s.push_str(&format!("\t{h}\n"));
            }
            s.push('\n');
        }
    }
    s.push_str(&format!("Usage:\n  kubectl {sub} [flags] [options]\n\nUse \"kubectl options\" for a list of global command-line options (applies to all commands).\n"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overview_lists_commands_in_kubectls_groups_and_layout() {
        let h = kubectl();
        assert!(h.starts_with("kubectl controls the Kubernetes cluster manager.\n"));
        assert!(h.contains("Basic Commands (Beginner):\n  create          Create a resource from a file or from stdin\n"));
        assert!(h.contains("  get             Display one or many resources\n"));
        assert!(h.ends_with("(applies to all commands).\n"));
    }

    #[test]
    fn a_commands_help_lists_its_flags_with_defaults() {
        let flags = [
            super::super::flags::flag("output", Some('o'), true),
            super::super::flags::flag("watch", Some('w'), false),
        ];
        let h = command("get", &flags);
        assert!(h.starts_with(
            "Display one or many resources.\n\nOptions:\n    -o, --output='':\n\tOutput format."
        ));
        assert!(h.contains("    -w, --watch=false:\n"));
        assert!(h.contains("Usage:\n  kubectl get [flags] [options]\n"));
    }
}
