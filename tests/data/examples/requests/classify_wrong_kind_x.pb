

tf1_examplesserving_default!




age


x
