

tf1_examplesregress




age
