

tf1_examples




age
