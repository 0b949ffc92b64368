//! Expressions over signals (`sqrt({/imu/acc.x}^2 + {/imu/acc.y}^2)`, `{/a/v} - {/b/v}`,
//! `{/wheel/rpm} * 2*PI/60`), parsed by `exmex` and evaluated a block of samples at a time.
//!
//! Signals are written in braces, `{topic/path}` as the legend names them; everything else
//! is exmex's float syntax: `+ - * / ^`, `sin cos tan asin acos atan sinh cosh tanh asinh
//! acosh atanh exp ln log log2 log10 sqrt cbrt abs signum floor ceil round trunc fract`,
//! `atan2(y, x) min(a, b) max(a, b)`, constants `PI π E TAU τ`, numbers such as `0.5` and
//! `1e-3`.
//!
//! Why blocks: exmex walks its operator list once per evaluation, about 30 ns for a small
//! expression, which per sample is ten times the arithmetic itself. Its operands here are
//! [`Lanes`], a block of up to [`BLOCK`] values (or one constant), so one walk computes a
//! whole block and each operator is a tight loop over it, in place (`app/benches/derived.rs`
//! measures it against the same arithmetic written as a plain loop).

use std::fmt;
use std::str::FromStr;

use exmex::{
    BinOp, Express, FlatEx, MakeOperators, MatchLiteral, Operator, literal_matcher_from_pattern,
    ops_factory,
};

/// Samples evaluated per walk of the expression.
pub const BLOCK: usize = 1024;

/// An operand: one constant, or a block of values.
#[derive(Clone, Debug)]
pub enum Lanes {
    /// The same value for every sample.
    Scalar(f64),
    /// One value per sample of the block.
    Block(Vec<f64>),
}

impl Default for Lanes {
    fn default() -> Self {
        Lanes::Scalar(0.0)
    }
}

impl FromStr for Lanes {
    type Err = std::num::ParseFloatError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(Lanes::Scalar)
    }
}

impl Lanes {
    fn map(self, f: impl Fn(f64) -> f64) -> Lanes {
        match self {
            Lanes::Scalar(a) => Lanes::Scalar(f(a)),
            Lanes::Block(mut a) => {
                a.iter_mut().for_each(|v| *v = f(*v));
                Lanes::Block(a)
            }
        }
    }

    /// `f(a, b)` lane by lane, in the storage of whichever operand is a block.
    fn zip(a: Lanes, b: Lanes, f: impl Fn(f64, f64) -> f64) -> Lanes {
        match (a, b) {
            (Lanes::Scalar(a), Lanes::Scalar(b)) => Lanes::Scalar(f(a, b)),
            (Lanes::Block(mut a), Lanes::Scalar(b)) => {
                a.iter_mut().for_each(|v| *v = f(*v, b));
                Lanes::Block(a)
            }
            (Lanes::Scalar(a), Lanes::Block(mut b)) => {
                b.iter_mut().for_each(|v| *v = f(a, *v));
                Lanes::Block(b)
            }
            (Lanes::Block(mut a), Lanes::Block(b)) => {
                a.iter_mut().zip(&b).for_each(|(v, &w)| *v = f(*v, w));
                Lanes::Block(a)
            }
        }
    }
}

impl Lanes {
    /// `a ^ b`. A constant exponent 2 (`x^2`, the usual case) multiplies, as a person writing
    /// the loop would: the correctly rounded square, at a tenth of `powf`'s cost (glibc's
    /// `powf` can be one unit in the last place off: `2.458966000622577e-38^2`). Every other
    /// exponent goes to `powf`.
    fn pow(a: Lanes, b: Lanes) -> Lanes {
        match b {
            Lanes::Scalar(2.0) => a.map(|v| v * v),
            b => Lanes::zip(a, b, f64::powf),
        }
    }
}

fn bin(apply: fn(Lanes, Lanes) -> Lanes, prio: i64, is_commutative: bool) -> BinOp<Lanes> {
    BinOp {
        apply,
        prio,
        is_commutative,
    }
}

// exmex's own float operators (`FloatOpsFactory`), with its priorities, over blocks.
ops_factory!(
    LanesOps,
    Lanes,
    Operator::make_bin("^", bin(Lanes::pow, 4, false)),
    Operator::make_bin("*", bin(|a, b| Lanes::zip(a, b, |a, b| a * b), 2, true)),
    Operator::make_bin("/", bin(|a, b| Lanes::zip(a, b, |a, b| a / b), 3, false)),
    Operator::make_bin("+", bin(|a, b| Lanes::zip(a, b, |a, b| a + b), 0, true)),
    Operator::make_bin_unary(
        "-",
        bin(|a, b| Lanes::zip(a, b, |a, b| a - b), 1, false),
        |a| a.map(|a| -a)
    ),
    Operator::make_bin("atan2", bin(|a, b| Lanes::zip(a, b, f64::atan2), 0, false)),
    Operator::make_bin("min", bin(|a, b| Lanes::zip(a, b, f64::min), 0, true)),
    Operator::make_bin("max", bin(|a, b| Lanes::zip(a, b, f64::max), 0, true)),
    Operator::make_unary("abs", |a| a.map(f64::abs)),
    Operator::make_unary("signum", |a| a.map(f64::signum)),
    Operator::make_unary("sin", |a| a.map(f64::sin)),
    Operator::make_unary("cos", |a| a.map(f64::cos)),
    Operator::make_unary("tan", |a| a.map(f64::tan)),
    Operator::make_unary("asin", |a| a.map(f64::asin)),
    Operator::make_unary("acos", |a| a.map(f64::acos)),
    Operator::make_unary("atan", |a| a.map(f64::atan)),
    Operator::make_unary("sinh", |a| a.map(f64::sinh)),
    Operator::make_unary("cosh", |a| a.map(f64::cosh)),
    Operator::make_unary("tanh", |a| a.map(f64::tanh)),
    Operator::make_unary("asinh", |a| a.map(f64::asinh)),
    Operator::make_unary("acosh", |a| a.map(f64::acosh)),
    Operator::make_unary("atanh", |a| a.map(f64::atanh)),
    Operator::make_unary("floor", |a| a.map(f64::floor)),
    Operator::make_unary("round", |a| a.map(f64::round)),
    Operator::make_unary("ceil", |a| a.map(f64::ceil)),
    Operator::make_unary("trunc", |a| a.map(f64::trunc)),
    Operator::make_unary("fract", |a| a.map(f64::fract)),
    Operator::make_unary("exp", |a| a.map(f64::exp)),
    Operator::make_unary("sqrt", |a| a.map(f64::sqrt)),
    Operator::make_unary("cbrt", |a| a.map(f64::cbrt)),
    Operator::make_unary("ln", |a| a.map(f64::ln)),
    Operator::make_unary("log", |a| a.map(f64::ln)),
    Operator::make_unary("log2", |a| a.map(f64::log2)),
    Operator::make_unary("log10", |a| a.map(f64::log10)),
    Operator::make_constant("PI", Lanes::Scalar(std::f64::consts::PI)),
    Operator::make_constant("π", Lanes::Scalar(std::f64::consts::PI)),
    Operator::make_constant("E", Lanes::Scalar(std::f64::consts::E)),
    Operator::make_constant("TAU", Lanes::Scalar(std::f64::consts::TAU)),
    Operator::make_constant("τ", Lanes::Scalar(std::f64::consts::TAU))
);

// Decimal numbers with an optional exponent (exmex's default reads no exponent).
literal_matcher_from_pattern!(
    NumberWithExponent,
    r"^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
);

/// Why an expression cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpressionError {
    /// It does not parse.
    #[error("{0}")]
    Syntax(String),
    /// A name outside braces that is no function or constant.
    #[error("unknown name '{0}': write signals in braces, as {{topic/path}}")]
    UnknownName(String),
}

/// A parsed expression.
#[derive(Clone)]
pub struct Expression {
    flat: FlatEx<Lanes, LanesOps, NumberWithExponent>,
}

impl fmt::Debug for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Expression")
            .field(&self.flat.unparse())
            .finish()
    }
}

impl Expression {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<Self, ExpressionError> {
        // exmex reads past the end of an unclosed brace; say so before it does.
        let mut depth = 0i32;
        for c in text.chars() {
            match c {
                '{' if depth > 0 => {
                    return Err(ExpressionError::Syntax("a brace inside braces".into()));
                }
                '{' => depth += 1,
                '}' if depth == 0 => {
                    return Err(ExpressionError::Syntax("a '}' without its '{'".into()));
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if depth != 0 {
            return Err(ExpressionError::Syntax("a '{' without its '}'".into()));
        }
        if text.trim().is_empty() {
            return Err(ExpressionError::Syntax("the expression is empty".into()));
        }
        // A user's text into a parser that may `expect` on input it did not foresee: a
        // panic there is a syntax error, not the end of the app.
        let parsed =
            std::panic::catch_unwind(|| FlatEx::<Lanes, LanesOps, NumberWithExponent>::parse(text))
                .map_err(|_| ExpressionError::Syntax("the expression does not parse".into()))?
                .map_err(|e| ExpressionError::Syntax(e.to_string()))?;
        let expression = Expression { flat: parsed };
        // A name without braces is a variable to exmex; here it is a typo.
        if let Some(bare) = expression
            .flat
            .var_names()
            .iter()
            .find(|name| !text.contains(&format!("{{{name}}}")))
        {
            return Err(ExpressionError::UnknownName(bare.clone()));
        }
        Ok(expression)
    }

    /// The signals it reads (the names in braces), sorted and each once: the order
    /// [`Expression::eval_block`] takes their values in.
    pub fn inputs(&self) -> &[String] {
        self.flat.var_names()
    }

    /// The expression for one block: `inputs[k]` holds the values of [`Expression::inputs`]`[k]`,
    /// each as long as `out`, where the result goes (a constant expression gives its value
    /// for every sample).
    pub fn eval_block(&self, inputs: Vec<Lanes>, out: &mut [f64]) {
        match self.flat.eval_vec(inputs) {
            Ok(Lanes::Block(values)) if values.len() == out.len() => {
                out.copy_from_slice(&values);
            }
            Ok(Lanes::Scalar(v)) => out.fill(v),
            // Only when the inputs do not match the expression's: no value.
            _ => out.fill(f64::NAN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, inputs: &[&[f64]]) -> Vec<f64> {
        let e = Expression::parse(text).unwrap();
        let len = inputs.first().map_or(1, |v| v.len());
        let mut out = vec![0.0; len];
        let lanes = inputs.iter().map(|v| Lanes::Block(v.to_vec())).collect();
        e.eval_block(lanes, &mut out);
        out
    }

    #[test]
    fn arithmetic_follows_the_usual_priorities() {
        assert_eq!(eval("1 + 2 * 3 - 4 / 2", &[]), vec![5.0]);
        assert_eq!(eval("2 ^ 3 ^ 1", &[]), vec![8.0]);
        assert_eq!(
            eval("{a} - {b}", &[&[5.0, 1.0], &[2.0, 4.0]]),
            vec![3.0, -3.0]
        );
        assert_eq!(
            eval("sqrt({x}^2 + {y}^2)", &[&[3.0, 5.0], &[4.0, 12.0]]),
            vec![5.0, 13.0]
        );
        assert_eq!(eval("{v} * 1e-3 + 2.5E2", &[&[1000.0]]), vec![251.0]);
        assert_eq!(eval("-{v}", &[&[2.0, -3.0]]), vec![-2.0, 3.0]);
        assert_eq!(eval("2 - {v}", &[&[2.0, -3.0]]), vec![0.0, 5.0]);
        assert_eq!(eval("max({a}, 0)", &[&[-1.0, 4.0]]), vec![0.0, 4.0]);
        assert_eq!(
            eval("atan2({y}, {x})", &[&[0.0], &[1.0]]),
            vec![std::f64::consts::FRAC_PI_2]
        );
        assert_eq!(eval("{r} * PI", &[&[2.0]]), vec![std::f64::consts::TAU]);
        let x = 2.458966000622577e-38;
        assert_eq!(eval("{x}^2", &[&[x, -3.0]]), vec![x * x, 9.0]);
        assert_eq!(eval("{x}^2.5", &[&[4.0]]), vec![32.0]);
    }

    #[test]
    fn inputs_are_the_braced_names_in_sorted_order() {
        let e = Expression::parse("{/imu/acc.y} * 2 + {/imu/acc.x} - {/imu/acc.y}").unwrap();
        assert_eq!(e.inputs(), ["/imu/acc.x", "/imu/acc.y"]);
        // The first input's values come first, whatever the text's order.
        assert_eq!(
            eval("{b} / {a}", &[&[2.0], &[8.0]]),
            vec![4.0],
            "a = 2, b = 8"
        );
    }

    #[test]
    fn bad_text_is_an_error_not_a_panic() {
        for text in [
            "",
            "  ",
            "{a",
            "a}",
            "{a{b}}",
            "1 +",
            "(1",
            "sqrt",
            "{a} {b}",
            "1..2",
            "x + 1",
            "{a} + y",
            "*",
            ",",
            "min(1, 2, 3)",
            "((((",
            "}{",
            "{}",
        ] {
            let got = Expression::parse(text);
            assert!(got.is_err() || text == "{}", "{text:?} parsed as {got:?}");
        }
        assert!(matches!(
            Expression::parse("x + 1"),
            Err(ExpressionError::UnknownName(name)) if name == "x"
        ));
    }

    proptest::proptest! {

        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn any_text_parses_or_fails_cleanly(text in "[-+*/^(){},. a-z0-9πE]{0,24}") {
            if let Ok(e) = Expression::parse(&text) {
                let lanes = e.inputs().iter().map(|_| Lanes::Block(vec![1.5, -2.0])).collect();
                let mut out = vec![0.0; 2];
                e.eval_block(lanes, &mut out);
                proptest::prop_assert_eq!(out.len(), 2);
            }
        }
    }
}
