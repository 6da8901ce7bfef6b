#![allow(dead_code)] // each example uses a part of this module

//! What dp-core's examples share: their error type and the positional-argument parser.

/// What an example can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExampleError {
    /// An argument that does not parse.
    #[error("argument {name} = {value:?} is not a {kind}")]
    BadArgument {
        /// The argument.
        name: &'static str,
        /// What was given.
        value: String,
        /// What it should be.
        kind: &'static str,
    },
    /// A word argument that names none of the choices.
    #[error("unknown {name} `{given}`: expected {expected}")]
    UnknownChoice {
        /// The argument.
        name: &'static str,
        /// What was given.
        given: String,
        /// The choices.
        expected: &'static str,
    },
    /// The library refused its input.
    #[error(transparent)]
    Core(#[from] dp_core::CoreError),
}

/// Argument `name`, parsed; `default` when absent.
///
/// # Errors
/// [`ExampleError::BadArgument`] when the argument is present and does not parse as a `kind`.
pub fn arg<T: std::str::FromStr>(
    value: Option<String>,
    name: &'static str,
    kind: &'static str,
    default: T,
) -> Result<T, ExampleError> {
    value.map_or(Ok(default), |v| {
        v.parse().map_err(|_| ExampleError::BadArgument {
            name,
            value: v,
            kind,
        })
    })
}
