pub mod berger;
