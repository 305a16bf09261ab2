\sleep abc
