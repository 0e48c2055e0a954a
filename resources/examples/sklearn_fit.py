# scikit-learn: fit a classifier on the iris data set and report how well it does.
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import classification_report
from sklearn.model_selection import train_test_split

data = load_iris()
x_train, x_test, y_train, y_test = train_test_split(data.data, data.target, test_size=0.3, random_state=0)
model = RandomForestClassifier(n_estimators=50, random_state=0).fit(x_train, y_train)
print(classification_report(y_test, model.predict(x_test), target_names=data.target_names))
for name, importance in sorted(zip(data.feature_names, model.feature_importances_), key=lambda p: -p[1]):
    print(f"{name:20s} {importance:.2f}")
