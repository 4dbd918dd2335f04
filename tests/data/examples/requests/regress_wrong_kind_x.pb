

tf1_examplesregress




x
