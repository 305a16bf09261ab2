\setshell x
