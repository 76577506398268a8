//! The network contract of xqzero (no torch here): the [`Evaluator`] trait that search
//! and self-play call, the fixed policy index and the input planes.

pub mod evaluator;

pub use evaluator::{
    EvalError, EvalInput, Evaluation, Evaluator, RandomEvaluator, UniformEvaluator,
};
