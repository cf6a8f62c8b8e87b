document.forms[0].submit();
