//! Everything between the pure engines and the disk: the project's `.patchgate.toml`.
//! (Paths, atomic writes and hashes live here too as they are built.)

pub mod config;
