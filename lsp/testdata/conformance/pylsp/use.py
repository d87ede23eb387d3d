from clean import double


print(double(3))
