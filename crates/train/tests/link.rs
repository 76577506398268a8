#[test]
fn libtorch_loads_and_computes() {
    let t = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    assert_eq!(f64::try_from(t.sum(tch::Kind::Float)).unwrap(), 6.0);
    eprintln!("cuda available: {}", xq_train::cuda_available());
}
