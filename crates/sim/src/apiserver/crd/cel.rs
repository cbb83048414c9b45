//! A small CEL subset for `x-kubernetes-validations` rules: literals, `self` and
//! `oldSelf`, field selection and indexing, `has()`, `size()`, arithmetic, comparisons,
//! `in`, `&&`/`||`/`!`, the ternary, list literals, the string methods `startsWith`,
//! `endsWith`, `contains` and `matches`, and the list macros `all` and `exists`.
//! A rule outside the subset fails to parse; the apiserver then does not evaluate it (and
//! kubectl says so when the CRD is applied).

use serde_json::Value;

pub use crate::apiserver::crd::cel_eval::{eval, Env};

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal value.
    Lit(Value),
    /// A variable: `self`, `oldSelf` or a macro's iteration variable.
    Var(String),
    /// `x.field`.
    Select(Box<Expr>, String),
    /// `x[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// `has(x.field)`.
    Has(Box<Expr>, String),
    /// A function or method call: `size(x)`, `x.size()`, `x.startsWith(y)`.
    Call(String, Vec<Expr>),
    /// `x.all(v, p)` / `x.exists(v, p)`.
    Macro(String, Box<Expr>, String, Box<Expr>),
    /// A unary operator: `!`, `-`.
    Unary(char, Box<Expr>),
    /// A binary operator.
    Binary(String, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `[a, b]`.
    List(Vec<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(Value),
    Str(String),
    Ident(String),
    Op(String),
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let v = if text.contains('.') {
                text.parse::<f64>().ok().map(Value::from)
            } else {
                text.parse::<i64>().ok().map(Value::from)
            };
            out.push(Tok::Num(v.ok_or(format!("bad number {text}"))?));
            if i < chars.len() && chars[i] == 'u' {
                i += 1;
            }
        } else if c == '"' || c == '\'' {
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                }
                s.push(chars[i]);
                i += 1;
            }
            if i >= chars.len() {
                return Err("unterminated string".into());
            }
            i += 1;
            out.push(Tok::Str(s));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            if ["&&", "||", "==", "!=", "<=", ">="].contains(&two.as_str()) {
                out.push(Tok::Op(two));
                i += 2;
            } else if "+-*/%<>!?:.,()[]".contains(c) {
                out.push(Tok::Op(c.to_string()));
                i += 1;
            } else {
                return Err(format!("unexpected character {c:?}"));
            }
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek_op(&self, op: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(Tok::Op(o)) if o == op)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let yes = self.peek_op(op);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(format!("expected {op}"))
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!("nesting deeper than {MAX_NESTING} levels"));
        }
        let e = self.ternary();
        self.depth -= 1;
        e
    }

    fn ternary(&mut self) -> Result<Expr, String> {
        let c = self.binary(0)?;
        if self.eat_op("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["<", "<=", ">", ">=", "==", "!=", "in"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        loop {
            let op = match self.toks.get(self.pos) {
                Some(Tok::Op(o)) if LEVELS[level].contains(&o.as_str()) => o.clone(),
                Some(Tok::Ident(o)) if o == "in" && LEVELS[level].contains(&"in") => o.clone(),
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        for op in ['!', '-'] {
            if self.eat_op(&op.to_string()) {
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(format!("nesting deeper than {MAX_NESTING} levels"));
                }
                let inner = self.unary()?;
                self.depth -= 1;
                return Ok(Expr::Unary(op, Box::new(inner)));
            }
        }
        self.postfix()
    }

    fn args(&mut self) -> Result<Vec<Expr>, String> {
        let mut args = Vec::new();
        if self.eat_op(")") {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat_op(")") {
                return Ok(args);
            }
            self.expect(",")?;
        }
    }

    fn postfix(&mut self) -> Result<Expr, String> {
        let mut e = self.primary()?;
        loop {
            if self.eat_op(".") {
                let Some(Tok::Ident(name)) = self.toks.get(self.pos).cloned() else {
                    return Err("expected a field name".into());
                };
                self.pos += 1;
                if !self.eat_op("(") {
                    e = Expr::Select(Box::new(e), name);
                    continue;
                }
                let mut args = self.args()?;
                if name == "all" || name == "exists" {
                    let (Some(pred), Some(Expr::Var(var)), 2) =
                        (args.pop(), args.pop(), args.len() + 2)
                    else {
                        return Err(format!("{name} takes a variable and a predicate"));
                    };
                    e = Expr::Macro(name, Box::new(e), var, Box::new(pred));
                } else {
                    args.insert(0, e);
                    e = Expr::Call(name, args);
                }
            } else if self.eat_op("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(i));
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let t = self.toks.get(self.pos).cloned().ok_or("unexpected end")?;
        self.pos += 1;
        match t {
            Tok::Num(v) => Ok(Expr::Lit(v)),
            Tok::Str(s) => Ok(Expr::Lit(Value::String(s))),
            Tok::Ident(id) => match id.as_str() {
                "true" => Ok(Expr::Lit(Value::Bool(true))),
                "false" => Ok(Expr::Lit(Value::Bool(false))),
                "null" => Ok(Expr::Lit(Value::Null)),
                "has" => {
                    self.expect("(")?;
                    let Expr::Select(x, f) = self.expr()? else {
                        return Err("has() takes a field selection".into());
                    };
                    self.expect(")")?;
                    Ok(Expr::Has(x, f))
                }
                _ if self.eat_op("(") => Ok(Expr::Call(id, self.args()?)),
                _ => Ok(Expr::Var(id)),
            },
            Tok::Op(o) if o == "(" => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op(o) if o == "[" => {
                let mut items = Vec::new();
                if !self.eat_op("]") {
                    loop {
                        items.push(self.expr()?);
                        if self.eat_op("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Expr::List(items))
            }
            Tok::Op(o) => Err(format!("unexpected {o}")),
        }
    }
}

const FUNCTIONS: &[&str] = &[
    "size",
    "startsWith",
    "endsWith",
    "contains",
    "matches",
    "int",
    "string",
];

fn check_names(e: &Expr, vars: &mut Vec<String>) -> Result<(), String> {
    match e {
        Expr::Lit(_) => Ok(()),
        Expr::Var(v) if vars.contains(v) => Ok(()),
        Expr::Var(v) => Err(format!("undeclared reference to '{v}'")),
        Expr::Select(x, _) | Expr::Has(x, _) | Expr::Unary(_, x) => check_names(x, vars),
        Expr::Index(a, b) | Expr::Binary(_, a, b) => {
            check_names(a, vars)?;
            check_names(b, vars)
        }
        Expr::Cond(a, b, c) => {
            check_names(a, vars)?;
            check_names(b, vars)?;
            check_names(c, vars)
        }
        Expr::List(items) => items.iter().try_for_each(|x| check_names(x, vars)),
        Expr::Call(f, args) if FUNCTIONS.contains(&f.as_str()) => {
            args.iter().try_for_each(|x| check_names(x, vars))
        }
        Expr::Call(f, _) => Err(format!("function '{f}' is not supported")),
        Expr::Macro(_, list, var, pred) => {
            check_names(list, vars)?;
            vars.push(var.clone());
            let r = check_names(pred, vars);
            vars.pop();
            r
        }
    }
}

/// How deeply a rule may nest parentheses and brackets.
const MAX_NESTING: usize = 32;
/// How long a rule may be.
const MAX_RULE_BYTES: usize = 4096;

/// Parses a rule; an error names what is outside the supported subset.
pub fn parse(rule: &str) -> Result<Expr, String> {
    // The parser and the evaluator recurse once per nesting level (`Parser::depth`).
    if rule.len() > MAX_RULE_BYTES {
        return Err(format!("rule longer than {MAX_RULE_BYTES} bytes"));
    }
    let mut p = Parser {
        toks: lex(rule)?,
        pos: 0,
        depth: 0,
    };
    let e = p.expr()?;
    if p.pos != p.toks.len() {
        return Err("unexpected trailing input".into());
    }
    check_names(&e, &mut vec!["self".into(), "oldSelf".into()])?;
    Ok(e)
}

/// Whether the expression reads `oldSelf` (a transition rule, skipped on create).
pub fn uses_old_self(e: &Expr) -> bool {
    match e {
        Expr::Var(v) => v == "oldSelf",
        Expr::Lit(_) => false,
        Expr::Select(x, _) | Expr::Has(x, _) | Expr::Unary(_, x) => uses_old_self(x),
        Expr::Index(a, b) | Expr::Binary(_, a, b) => uses_old_self(a) || uses_old_self(b),
        Expr::Cond(a, b, c) => uses_old_self(a) || uses_old_self(b) || uses_old_self(c),
        Expr::List(v) | Expr::Call(_, v) => v.iter().any(uses_old_self),
        Expr::Macro(_, l, _, p) => uses_old_self(l) || uses_old_self(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(rule: &str, this: Value) -> Result<Value, String> {
        eval(&parse(rule)?, &mut Env::new(&this, None))
    }

    #[test]
    fn common_rules_evaluate() {
        let spec = json!({"minReplicas": 1, "replicas": 3, "maxReplicas": 2, "name": "web-1",
            "ports": [80, 443]});
        assert_eq!(
            run("self.minReplicas <= self.replicas", spec.clone()),
            Ok(json!(true))
        );
        assert_eq!(
            run("self.replicas <= self.maxReplicas", spec.clone()),
            Ok(json!(false))
        );
        assert_eq!(
            run(
                "has(self.name) && self.name.startsWith('web')",
                spec.clone()
            ),
            Ok(json!(true))
        );
        assert_eq!(
            run("self.ports.size() > 0 && 80 in self.ports", spec.clone()),
            Ok(json!(true))
        );
        assert_eq!(
            run("self.ports.all(p, p < 1024)", spec.clone()),
            Ok(json!(true))
        );
        assert_eq!(
            run("!has(self.other) ? true : false", spec.clone()),
            Ok(json!(true))
        );
        assert_eq!(
            run("self.other == 1", spec),
            Err("no such key: other".into())
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        let deep = format!("{}1{}", "(".repeat(1000), ")".repeat(1000));
        assert_eq!(
            parse(&deep).map(|_| ()),
            Err("nesting deeper than 32 levels".into())
        );
        let chain = format!("self{}", ".a".repeat(3000));
        assert!(parse(&chain).is_err());
        assert_eq!(
            parse(&format!("{}true", "!".repeat(3000))).map(|_| ()),
            Err("nesting deeper than 32 levels".into())
        );
        let ternaries = format!("{}1", "true ? 1 : ".repeat(300));
        assert!(parse(&ternaries).is_err());
        assert!(parse("self.a > 0 ? (self.b < 1 ? 1 : 2) : 3").is_ok());
    }

    #[test]
    fn rules_outside_the_subset_are_refused_by_name() {
        assert_eq!(
            parse("self.x.map(y, y + 1).size() > 0").map(|_| ()),
            Err("function 'map' is not supported".into())
        );
        assert_eq!(
            parse("isURL(self.u)").map(|_| ()),
            Err("function 'isURL' is not supported".into())
        );
    }
}
