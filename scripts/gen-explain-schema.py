#!/usr/bin/env python3
# Makes crates/sim/src/kubectl/explain_schema.json (kubectl explain) from the JSON schemas
# k8s-openapi carries for its schemars feature: for the served kinds and every type they
# reach, the description, type, properties and required fields.
# Usage: scripts/gen-explain-schema.py ~/.cargo/registry/src/*/k8s-openapi-0.29.0/src/v1_35 ROOTS OUT.json
# ROOTS is the served kinds (object.rs), comma-separated:
# io.k8s.api.core.v1.Pod,\
# io.k8s.api.core.v1.Node,\
# io.k8s.api.core.v1.Service,\
# io.k8s.api.core.v1.Endpoints,\
# io.k8s.api.core.v1.Namespace,\
# io.k8s.api.core.v1.ConfigMap,\
# io.k8s.api.core.v1.Secret,\
# io.k8s.api.core.v1.ServiceAccount,\
# io.k8s.api.core.v1.Event,\
# io.k8s.api.core.v1.PersistentVolumeClaim,\
# io.k8s.api.core.v1.PersistentVolume,\
# io.k8s.api.core.v1.ResourceQuota,\
# io.k8s.api.core.v1.LimitRange,\
# io.k8s.api.apps.v1.Deployment,\
# io.k8s.api.apps.v1.ReplicaSet,\
# io.k8s.api.apps.v1.DaemonSet,\
# io.k8s.api.apps.v1.StatefulSet,\
# io.k8s.api.apps.v1.ControllerRevision,\
# io.k8s.api.batch.v1.Job,\
# io.k8s.api.batch.v1.CronJob,\
# io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler,\
# io.k8s.api.discovery.v1.EndpointSlice,\
# io.k8s.api.policy.v1.PodDisruptionBudget,\
# io.k8s.api.coordination.v1.Lease,\
# io.k8s.api.rbac.v1.Role,\
# io.k8s.api.rbac.v1.RoleBinding,\
# io.k8s.api.rbac.v1.ClusterRole,\
# io.k8s.api.rbac.v1.ClusterRoleBinding,\
# io.k8s.api.scheduling.v1.PriorityClass,\
# io.k8s.api.storage.v1.StorageClass,\
# io.k8s.api.networking.v1.Ingress,\
# io.k8s.api.networking.v1.IngressClass,\
# io.k8s.api.networking.v1.NetworkPolicy,\
# io.k8s.api.authorization.v1.SelfSubjectAccessReview
import os, re, json, sys
root = os.path.expanduser(sys.argv[1])
types = {}
impl_re = re.compile(r'impl crate::schemars::JsonSchema for (\w+) \{\n    fn schema_name\(\) -> std::borrow::Cow<\'static, str> \{\n        "([^"]+)"\.into\(\)\n    \}\n\n    fn json_schema\(__gen: &mut crate::schemars::SchemaGenerator\) -> crate::schemars::Schema \{\n        crate::schemars::json_schema!\((\{.*?\n        \})\)\n    \}\n\}', re.S)
sub_desc = re.compile(r'\(\{\s*let mut schema_obj = __gen\.subschema_for::<crate::([\w:]+)>\(\);\s*schema_obj\.ensure_object\(\)\.insert\("description"\.into\(\), ("(?:[^"\\]|\\.)*")\.into\(\)\);\s*schema_obj\s*\}\)', re.S)
sub_plain = re.compile(r'\(__gen\.subschema_for::<crate::([\w:]+)>\(\)\)')
for dp, dn, fn in os.walk(root):
    for f in fn:
        if not f.endswith('.rs'): continue
        text = open(os.path.join(dp, f)).read()
        rel = os.path.relpath(os.path.join(dp, f), root)[:-3].replace(os.sep, '::')
        for m in impl_re.finditer(text):
            rust, name, body = m.group(1), m.group(2), m.group(3)
            body = body.strip()
            body = sub_desc.sub(lambda mm: '{"$ref": "%s", "description": %s}' % (mm.group(1), mm.group(2)), body)
            body = sub_plain.sub(lambda mm: '{"$ref": "%s"}' % mm.group(1), body)
            body = re.sub(r',(\s*[}\]])', r'\1', body)
            try:
                js = json.loads(body)
            except Exception as e:
                continue
            types[name] = (rel, rust, js)
# map rust crate paths to schema names
path_to_name = {}
for name, (rel, rust, js) in types.items():
    parts = rel.split('::')
    # rel like api/core/v1/pod -> module api::core::v1 ; types are re-exported at module level
    mod = '::'.join(parts[:-1])
    path_to_name[mod + '::' + rust] = name
def conv(s):
    out = {}
    if 'description' in s: out['d'] = s['description']
    if '$ref' in s:
        out['ref'] = path_to_name.get(s['$ref'], s['$ref'])
    if 'type' in s: out['t'] = s['type'] if isinstance(s['type'], str) else 'string'
    if 'items' in s: out['items'] = conv(s['items'])
    if isinstance(s.get('additionalProperties'), dict): out['map'] = conv(s['additionalProperties'])
    return out
schemas = {}
for name, (rel, rust, js) in types.items():
    e = {}
    if 'description' in js: e['d'] = js['description']
    if 'type' in js: e['t'] = js['type'] if isinstance(js['type'], str) else 'string'
    if 'properties' in js: e['p'] = {k: conv(v) for k, v in js['properties'].items()}
    # k8s-openapi requires `metadata` because its Rust field is not optional; the
    # apiserver's OpenAPI does not.
    req = [r for r in js.get('required', []) if r != 'metadata']
    if req: e['r'] = req
    schemas[name] = e
roots = sys.argv[2].split(',')
keep = set()
stack = list(roots)
def refs(fs):
    out = []
    if 'ref' in fs: out.append(fs['ref'])
    for k in ('items', 'map'):
        if k in fs: out += refs(fs[k])
    return out
while stack:
    n = stack.pop()
    if n in keep or n not in schemas: continue
    keep.add(n)
    for f in schemas[n].get('p', {}).values():
        stack += refs(f)
missing = [r for r in roots if r not in schemas]
print('missing roots', missing, file=sys.stderr)
out = {n: schemas[n] for n in sorted(keep)}
json.dump(out, open(sys.argv[3], 'w'), separators=(',', ':'), sort_keys=True)
print(len(out), 'types', os.path.getsize(sys.argv[3]), 'bytes', file=sys.stderr)
