
>

tf1_examplesserving_defaulttensorflow/serving/classify
5

tf1_examplesregresstensorflow/serving/regress




age
